"""`make run` restarted on a var dir with data: the embedded FalkorDB/Redis replays its data before it answers, and
that may take longer than a fresh start (a 47 MB append-only file took 24 s on a loaded 2-core machine), so a server
still loading is waited for, never killed as one that does not answer; and its append-only file is kept compact."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from exograph.core.embedded import EmbeddedFalkorDB


@pytest.fixture
def short_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="exo-load-", dir="/tmp"))  # a unix socket path stays short
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _store(directory: Path, *extra: str) -> EmbeddedFalkorDB:
    return EmbeddedFalkorDB(
        socket_path=directory / "s.sock",
        data_dir=directory / "data",
        log_file=directory / "falkordb.log",
        extra_args=extra,
    )


def test_a_store_still_loading_its_data_is_waited_for_not_killed(short_dir: Path) -> None:
    first = _store(short_dir)
    first.start()
    client = redis.Redis(unix_socket_path=str(first.socket_path))
    try:
        for index in range(40):
            client.set(f"note:{index}", os.urandom(2000).hex())  # 4 kB that do not compress: events between keys
        client.bgrewriteaof()  # into the file's RDB base, which the delay below slows
        while (
            client.info("persistence")["aof_rewrite_in_progress"] or client.info("persistence")["aof_rewrite_scheduled"]
        ):
            time.sleep(0.05)
    finally:
        client.close()
        first.stop()
    # 40 keys at 50 ms each: two seconds of loading, four times the answer wait; it answers LOADING meanwhile
    again = _store(short_dir, "--key-load-delay", "50000", "--loading-process-events-interval-bytes", "1024")
    try:
        again.start(wait_seconds=0.5)
        client = redis.Redis(unix_socket_path=str(again.socket_path))
        try:
            assert client.dbsize() == 40 and len(client.get("note:39") or b"") == 4000
        finally:
            client.close()
    finally:
        again.stop()


def test_the_append_only_file_is_rewritten_before_it_grows_slow_to_replay(short_dir: Path) -> None:
    store = _store(short_dir)
    store.start()
    client = redis.Redis(unix_socket_path=str(store.socket_path))
    try:
        minimum = int(client.config_get("auto-aof-rewrite-min-size")["auto-aof-rewrite-min-size"])
        assert client.config_get("appendonly")["appendonly"] == "yes"
        assert minimum <= 16 * 1024 * 1024  # redis' default, 64 MB, replays in tens of seconds of graph queries
    finally:
        client.close()
        store.stop()
