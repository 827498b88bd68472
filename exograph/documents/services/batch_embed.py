"""A batch group's embedder calls, on a thread of their own beside the stages (issue 29 §5).

The local embedder runs on ONNX Runtime, which releases the GIL, while every stage (parse, extraction, the
document rows, the graph write) is Python holding it: run one after the other, one core idles. So a group's
chunk texts and entity texts go to one embedder thread as soon as they are known (`EmbedderThread`), and the
stages' thread picks the vectors up when a stage needs them. The thread only computes: it embeds texts and reads
the graph's held entity vectors (FalkorDB), never the database rows, never an event; what it returns is written
by the stages' thread, so SQLite keeps one writer. Its jobs run in order (the group's chunks in one call, then
its entity texts a few hundred at a time), and a job whose result is never asked for (the group stopped on an
error) is cancelled when the group's block ends.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, TypeVar

from django.db import connections

from exograph.core.errors import ExoGraphError, TransientError
from exograph.documents.extraction.types import Extraction
from exograph.documents.models import Document
from exograph.documents.services.stages import _title_entity_add
from exograph.graphs.models import Graph

logger = logging.getLogger(__name__)

T = TypeVar("T")

AHEAD_TEXTS = 256  # entity texts gathered before they go to the embedder thread in one call


class EmbedderThread:
    """One thread running a group's embedder jobs in the order they are submitted."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        context = contextvars.copy_context()  # the store's read routing (primary_reads) goes with the job
        return self._pool.submit(context.run, _job, fn, *args, **kwargs)

    def close(self) -> None:
        """Jobs not started are dropped; the one running (pure computation) is waited for."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def _job(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    try:
        return fn(*args, **kwargs)
    finally:
        connections.close_all()  # nothing here opens one; if something ever does, it is not left open


@contextmanager
def embedder_thread() -> Iterator[EmbedderThread]:
    thread = EmbedderThread()
    try:
        yield thread
    finally:
        thread.close()


def chunk_vectors(texts: list[str]) -> list[list[float]]:
    """A job: the vectors of a group's chunk texts, in one embedder call."""
    from exograph.graphs.embeddings import get_embedder

    return get_embedder().embed(texts)


def names_prepare(graph: Graph, names: list[tuple[str, str]]) -> int:
    """A job: the entity texts of some of a group's documents, embedded (or taken from the graph's held vectors)
    into the cache graph_document_write reads."""
    from exograph.graphs.services import entity_vectors_prepare

    return entity_vectors_prepare(graph=graph, names=names)


class NamesAhead:
    """A group's entity texts sent to the embedder thread as its documents' extractions are made, a few hundred
    texts a call, and waited for before each document's index stage. Best effort: a call that failed is made
    again on the stages' thread from the saved extractions (entities_embed), which decides as before whether the
    group is retried; the index stage embeds whatever is still missing."""

    def __init__(self, thread: EmbedderThread, documents: dict[str, Document]) -> None:
        self._thread = thread
        self._documents = documents
        self._gathering: dict[str, tuple[Graph, list[tuple[str, str]], list[str]]] = {}
        self._sent: dict[str, Future[int]] = {}  # document id -> the call carrying its texts

    def add(self, document_id: str, extraction: Extraction) -> None:
        document = self._documents.get(document_id)
        if document is None:
            return
        try:
            found = entity_names(extraction, title=document.title)
        except Exception:  # best effort: its index stage's graph write embeds its texts itself
            logger.warning("document %s: entity texts not gathered ahead", document_id, exc_info=True)
            return
        key = str(document.graph_id)
        _, names, ids = self._gathering.setdefault(key, (document.graph, [], []))
        names.extend(found)
        ids.append(document_id)
        if len(names) >= AHEAD_TEXTS:
            self._send(key)

    def send_rest(self) -> None:
        for key in list(self._gathering):
            self._send(key)

    def _send(self, key: str) -> None:
        graph, names, ids = self._gathering.pop(key)
        sent = self._thread.submit(names_prepare, graph, names)
        for document_id in ids:
            self._sent[document_id] = sent

    def covers(self, document_id: str) -> bool:
        return document_id in self._sent

    def wait(self, document_id: str, *, last_attempt: bool) -> None:
        """Before a document's index stage: the call carrying its texts has ended. If it failed, the texts of every
        document it carried are embedded here (entities_embed)."""
        sent = self._sent.pop(document_id, None)
        if sent is None:
            return
        try:
            sent.result()
        except Exception:  # the embedder or the store is down, or refuses: entities_embed meets it and decides
            logger.warning("entity texts of a batch group not embedded ahead", exc_info=True)
            carried = [document_id] + [i for i, f in self._sent.items() if f is sent]
            for i in carried[1:]:
                del self._sent[i]
            entities_embed(document_ids=carried, last_attempt=last_attempt)


def entities_embed(*, document_ids: Sequence[str], last_attempt: bool) -> None:
    """Embed the entity texts these documents' graph writes will need (from their saved extractions), in one call
    per graph, into the cache graph_document_write reads. On failure nothing is lost: each write embeds what it
    misses."""
    from exograph.documents.extraction import extraction_from_json
    from exograph.documents.models import DocumentBlob
    from exograph.graphs.services import entity_vectors_prepare

    if not document_ids:
        return
    wanted: dict[str, tuple[Graph, list[tuple[str, str]]]] = {}
    saved = dict(
        DocumentBlob.objects.filter(document_id__in=list(document_ids), extraction__isnull=False).values_list(
            "document_id", "extraction"
        )
    )
    for document in Document.objects.select_related("graph").filter(pk__in=list(document_ids)):
        data = saved.get(document.pk)
        if not data:
            continue
        names = wanted.setdefault(str(document.graph_id), (document.graph, []))[1]
        names.extend(entity_names(extraction_from_json(data), title=document.title))
    for graph, names in wanted.values():
        try:
            entity_vectors_prepare(graph=graph, names=names)
        except TransientError:
            if not last_attempt:
                raise
        except ExoGraphError:
            pass


def entity_names(extraction: Extraction, *, title: str) -> list[tuple[str, str]]:
    """The (name, description) entity texts a document's graph write embeds: its entities, mentions and relation
    ends, and its title's entity (added here as the index stage adds it; the extraction itself is not changed)."""
    extraction = Extraction(
        entities=[replace(e, aliases=list(e.aliases)) for e in extraction.entities],
        mentions=list(extraction.mentions),
        relations=list(extraction.relations),
    )
    _title_entity_add(extraction, title=title, chunk_ids=[])
    names = [(e.name, e.description) for e in extraction.entities]
    names.extend((m.name, "") for m in extraction.mentions)
    names.extend(pair for r in extraction.relations for pair in ((r.source, ""), (r.target, "")))
    return names
