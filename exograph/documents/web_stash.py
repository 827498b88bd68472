"""The web upload's confirmation step keeps the chosen file between its quote and Confirm: the bytes in a private
file under VAR_DIR/upload-stash/<user id>/<random id>, removed on Confirm and once older than STASH_SECONDS (a
stale one is swept when the same account stashes the next file). Only the account that stashed a file can read it."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path

from django.conf import settings

STASH_SECONDS = 3600
_ID = re.compile(r"[0-9a-f]{32}")


def _directory(user_id: int) -> Path:
    return Path(settings.VAR_DIR) / "upload-stash" / str(int(user_id))


def _sweep(directory: Path) -> None:
    cutoff = time.time() - STASH_SECONDS
    for path in directory.glob("*"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
        except OSError:
            continue


def stash_put(*, user_id: int, filename: str, data: bytes) -> str:
    """Keep data (named filename) for user_id's Confirm; returns the stash id."""
    directory = _directory(user_id)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    _sweep(directory)
    stash_id = uuid.uuid4().hex
    (directory / f"{stash_id}.bin").write_bytes(data)
    (directory / f"{stash_id}.json").write_text(json.dumps({"filename": filename}))
    return stash_id


def stash_get(*, user_id: int, stash_id: str) -> tuple[str, bytes] | None:
    """(filename, data) of user_id's stash, or None when it is gone (confirmed, expired) or not theirs."""
    if not _ID.fullmatch(stash_id or ""):
        return None
    directory = _directory(user_id)
    data_path, meta_path = directory / f"{stash_id}.bin", directory / f"{stash_id}.json"
    try:
        if data_path.stat().st_mtime < time.time() - STASH_SECONDS:
            return None
        return str(json.loads(meta_path.read_text())["filename"]), data_path.read_bytes()
    except (OSError, ValueError, KeyError):
        return None


def stash_drop(*, user_id: int, stash_id: str) -> None:
    if _ID.fullmatch(stash_id or ""):
        directory = _directory(user_id)
        for suffix in (".bin", ".json"):
            (directory / f"{stash_id}{suffix}").unlink(missing_ok=True)
