"""The local model's query path on ONNX Runtime: one export per machine, verified, shared by every process.

all-MiniLM-L6-v2 is a BERT encoder + mean pooling + L2 normalisation. Its BERT, exported to ONNX and run by
ONNX Runtime on one thread, gives the same vectors as sentence-transformers on torch (within ~1e-6) in about a
third of the time for a single short text, which is what a search query is, and batches (ingest) in about half
the CPU time of torch (issue 29 §5).

The export (~12 s, ~91 MB) is made once per machine into ``settings.EMBEDDING_ONNX_DIR`` (default
``<sys.prefix>/var/exograph/onnx``: next to the torch, onnx and model packages it is derived from, so it lives
and dies with the virtualenv or image that ``make venv`` / the Dockerfile builds, is shared by every run,
worker and test session of that environment, and never lands in a per-run ``EXOGRAPH_VAR_DIR``). The file
name carries a key: the digest of the model files that determine the graph (config + weights) and the torch,
onnx and opset versions that wrote it, so an upgraded model or exporter never reads a stale file.

Writes are atomic (temp file + ``os.replace``) under a file lock, so processes starting at once export once;
a sidecar holds the file's SHA-256 and is written last, so a partial, truncated or corrupt file is detected
and rebuilt. ``manage.py embedding_onnx_build`` (run by ``make venv`` and the Dockerfile) builds it ahead
of time; otherwise the first model load builds it. Any failure here is the caller's to catch: it falls back
to torch.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from django.conf import settings

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")  # the order of BertModel.forward's arguments
OUTPUT = "last_hidden_state"
# The model files the exported graph is made of; the tokenizer stays sentence-transformers' own.
MODEL_FILES = ("config.json", "model.safetensors")
# A second process waits this long for another's export before giving up (and using torch).
LOCK_TIMEOUT_SECONDS = 600.0
# One intra-op thread: a query is a few dozen tokens, and on a small shared machine more threads only wait
# on each other (and on FalkorDB); concurrent queries run in parallel sessions.run() calls instead.
ORT_THREADS = 1


def cache_dir() -> Path:
    return Path(settings.EMBEDDING_ONNX_DIR)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def cache_key(model_dir: Path) -> str:
    """What the exported file depends on: the model files' bytes and the exporter's versions."""
    digest = hashlib.sha256()
    for name in MODEL_FILES:
        digest.update(name.encode() + b"\0" + _sha256_file(model_dir / name).encode() + b"\0")
    digest.update(f"torch={_version('torch')};onnx={_version('onnx')};opset={OPSET}".encode())
    return digest.hexdigest()[:20]


def onnx_path(model_dir: Path, model_name: str) -> Path:
    return cache_dir() / f"{model_name}-{cache_key(model_dir)}.onnx"


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def is_verified(path: Path) -> bool:
    """The file exists, its sidecar exists, and the file's SHA-256 is the one recorded when it was written."""
    try:
        recorded = _sidecar(path).read_text().strip()
        return bool(recorded) and _sha256_file(path) == recorded
    except OSError:
        return False


def _write_atomically(path: Path, write: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _export(model: SentenceTransformer, path: Path) -> None:
    import torch

    bert = model[0].auto_model
    if not isinstance(bert, torch.nn.Module):
        raise TypeError(f"unexpected transformer module {type(bert).__name__}")
    features = model.tokenize(["an example sentence to trace"])
    args = tuple(features[name] for name in INPUTS)
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUTS, OUTPUT)}

    def write(tmp: Path) -> None:
        with torch.no_grad(), warnings.catch_warnings():
            # "torch.tensor results are registered as constants": the 1.0 of the attention mask, as intended.
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            torch.onnx.export(
                bert,
                args,
                str(tmp),
                input_names=list(INPUTS),
                output_names=[OUTPUT],
                dynamic_axes=axes,
                opset_version=OPSET,
                dynamo=False,
            )

    sidecar = _sidecar(path)
    sidecar.unlink(missing_ok=True)  # from here until the new sidecar lands, readers see "not verified"
    _write_atomically(path, write)
    digest = _sha256_file(path)
    _write_atomically(sidecar, lambda tmp: tmp.write_text(digest + "\n"))


def ensure_export(model: SentenceTransformer, model_dir: Path, model_name: str) -> tuple[Path, bool]:
    """The verified exported file for this model, exporting it first if it is missing or corrupt.

    Returns (path, exported_now). Raises whatever the export raises (no onnx package, unwritable directory,
    lock timeout...).
    """
    from filelock import FileLock

    path = onnx_path(model_dir, model_name)
    if is_verified(path):
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_SECONDS):
        if is_verified(path):  # another process finished it while we waited
            return path, False
        _export(model, path)
    return path, True


def check_pipeline(model: SentenceTransformer) -> None:
    """Raise unless the model is exactly Transformer -> mean Pooling -> Normalize (what OnnxEncoder computes)."""
    from sentence_transformers.models import Pooling

    kinds = [type(module).__name__ for module in model]
    pooling = model[1] if len(model) > 1 else None
    if (
        kinds != ["Transformer", "Pooling", "Normalize"]
        or not isinstance(pooling, Pooling)
        or pooling.get_pooling_mode_str() != "mean"
    ):
        raise ValueError(f"unsupported sentence-transformers pipeline {kinds}")


class OnnxEncoder:
    """The exported BERT on ONNX Runtime, plus sentence-transformers' mean pooling and L2 normalisation.

    ``encode`` is thread-safe (InferenceSession.run is); it takes features already tokenised by the caller.
    """

    def __init__(self, path: Path) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = ORT_THREADS
        options.inter_op_num_threads = ORT_THREADS
        options.log_severity_level = 3  # errors only
        self.path = path
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = [node.name for node in self._session.get_inputs()]
        if sorted(names) != sorted(INPUTS):
            raise ValueError(f"unexpected ONNX inputs {names}")

    def encode(self, features: dict[str, np.ndarray]) -> np.ndarray:
        """(batch, dimension) float32 unit vectors for int64 ``input_ids``, ``attention_mask``, ``token_type_ids``."""
        feeds = {name: np.ascontiguousarray(features[name], dtype=np.int64) for name in INPUTS}
        (hidden,) = self._session.run([OUTPUT], feeds)
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        # sentence_transformers.models.Pooling (mean) then Normalize (torch.nn.functional.normalize, eps 1e-12).
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return np.asarray(pooled / norms, dtype=np.float32)
