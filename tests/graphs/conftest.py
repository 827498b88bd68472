"""Graph test helpers: every test's FalkorDB stores (the World Graph's included) are dropped after it."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from exograph.accounts.models import User
from exograph.core.embedded import EmbeddedFalkorDB
from exograph.core.falkor import falkordb_reset
from exograph.graphs.embeddings import get_embedder
from exograph.graphs.models import Graph
from exograph.graphs.services import graph_document_write
from exograph.graphs.types import ChunkIn, EntityIn, MentionIn, RelationIn


@pytest.fixture(autouse=True)
def _drop_graph_stores(drop_graph_stores) -> None:  # type: ignore[no-untyped-def]
    """Every graph test drops its stores (tests/conftest.py's drop_graph_stores)."""


@pytest.fixture
def write_doc() -> Callable[..., str]:
    """Write a small document (chunk texts; entities mentioned in every chunk; relations) into a graph."""

    def write(
        graph: Graph,
        contributor: User,
        *,
        texts: list[str],
        entities: list[tuple[str, str, str]],
        relations: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
        filename: str = "paper.pdf",
        document_id: str | None = None,
    ) -> str:
        document_id = document_id or f"doc_{uuid.uuid4().hex[:12]}"
        vectors = get_embedder().embed(texts)
        chunks = [
            ChunkIn(id=f"{document_id}:{i}", text=text, page=i + 1, ordinal=i, embedding=vector)
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ]
        mentions = [
            MentionIn(chunk_id=chunk.id, entity_name=name, entity_type=kind)
            for chunk in chunks
            for name, kind, _ in entities
            if name.casefold() in chunk.text.casefold()
        ]
        types = {name: kind for name, kind, _ in entities}
        graph_document_write(
            graph=graph,
            document_id=document_id,
            filename=filename,
            contributor=contributor,
            chunks=chunks,
            entities=[EntityIn(name=name, type=kind, description=description) for name, kind, description in entities],
            mentions=mentions,
            relations=[
                RelationIn(
                    source_name=a,
                    source_type=types[a],
                    target_name=b,
                    target_type=types[b],
                    type=kind,
                    chunk_ids=tuple(c.id for c in chunks if a.casefold() in c.text.casefold()),
                )
                for a, kind, b in relations
            ],
        )
        return document_id

    return write


@pytest.fixture
def write_resolved() -> Callable[..., str]:
    """Write a document as the pipeline does after extraction: the names go through the merge rule
    (documents.extraction.resolve), so a node carries the other surface forms its document wrote."""

    def write(graph: Graph, contributor: User, *, texts: list[str], names: list[tuple[str, str]]) -> str:
        from exograph.documents.extraction.resolve import extraction_resolve
        from exograph.documents.extraction.types import Entity, Extraction, Mention
        from exograph.documents.services.stages import extraction_graph_inputs

        document_id = f"doc_{uuid.uuid4().hex[:12]}"
        vectors = get_embedder().embed(texts)
        chunks = [
            ChunkIn(id=f"{document_id}:{i}", text=text, page=i + 1, ordinal=i, embedding=vector)
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ]
        extraction = extraction_resolve(
            Extraction(
                entities=[Entity(name=name, type=kind) for name, kind in names],
                mentions=[
                    Mention(chunk.id, name, kind)
                    for chunk in chunks
                    for name, kind in names
                    if name.casefold() in chunk.text.casefold()
                ],
            )
        )
        entities, mentions, relations = extraction_graph_inputs(extraction)
        graph_document_write(
            graph=graph,
            document_id=document_id,
            filename="harbour.pdf",
            contributor=contributor,
            chunks=chunks,
            entities=entities,
            mentions=mentions,
            relations=relations,
        )
        return document_id

    return write


QUANTUM_TEXTS = [
    "Quantum computing uses qubits to run algorithms such as Shor's algorithm.",
    "Quantum error correction protects qubits from noise and decoherence.",
]
QUANTUM_ENTITIES = [
    ("Quantum computing", "concept", "Computation that uses quantum-mechanical phenomena."),
    ("Qubit", "concept", "The basic unit of quantum information."),
    ("Quantum error correction", "technique", "Techniques to protect quantum information from errors."),
    ("Shor's algorithm", "algorithm", ""),
]
QUANTUM_RELATIONS = [
    ("Quantum computing", "uses", "Qubit"),
    ("Quantum error correction", "protects", "Qubit"),
    ("Quantum computing", "runs", "Shor's algorithm"),
]


@pytest.fixture
def store_servers(settings) -> Iterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """Start servers by name; the settings point at them for the test and back at the session's store after."""
    from tests.graphs.topology import (  # topology.py imports this module
        SETTINGS,
        SentinelProcess,
        tcp_server,
        wait_replica_linked,
    )

    directory = Path(tempfile.mkdtemp(prefix="exo-topo-", dir="/tmp"))
    started: dict[str, Any] = {}
    saved = {name: getattr(settings, name) for name in SETTINGS}
    falkordb_reset()

    def start(name: str, *, replica_of: str = "") -> EmbeddedFalkorDB:
        server = tcp_server(directory, name, replica_of=started[replica_of].port if replica_of else 0)
        started[name] = server
        if replica_of:
            wait_replica_linked(server)
        return server

    started["start"] = start
    started["dir"] = directory
    yield started
    for name, value in saved.items():
        setattr(settings, name, value)
    falkordb_reset()
    for server in started.values():
        if isinstance(server, EmbeddedFalkorDB):
            server.stop(wait_seconds=5)
        elif isinstance(server, SentinelProcess):
            server.stop()
    shutil.rmtree(directory, ignore_errors=True)
