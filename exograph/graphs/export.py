"""Export of a graph's knowledge in standard formats (GraphML, JSON Lines, CSV, JSON-LD), streamed.

A graph is read from its store a page at a time (store.store_export_*: id cursors, EXPORT_PAGE nodes per
read), so an export holds one page in memory whatever the graph's size. Entities (name, type, description,
aliases), typed relations with their provenance (documents, pages, chunk ids) and, for jsonl, the passages
themselves; never embeddings. Export is free (the account's own data); it counts against the request
rate limit like any other call.

Who may export what: the owner exports their graph; the World Graph exports only the caller's own
contributions (their documents, the entity text and relations those documents gave); a world-scope graph of
another account is refused (403), a private one is 404 like every other read.
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from exograph.accounts.models import User
from exograph.core.errors import PermissionDenied, ValidationError
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.selectors import graph_get_for_user

logger = logging.getLogger(__name__)

EXPORT_PAGE = 500
EXPORT_FORMATS: dict[str, tuple[str, str]] = {
    # format -> (content type, file extension)
    "graphml": ("application/graphml+xml; charset=utf-8", "graphml"),
    "jsonl": ("application/x-ndjson; charset=utf-8", "jsonl"),
    "csv": ("text/csv; charset=utf-8", "csv"),
    "jsonld": ("application/ld+json; charset=utf-8", "jsonld"),
}
VOCAB = "https://exograph.dev/ns/graph#"
LIST_SEPARATOR = "|"


@dataclass(frozen=True)
class GraphExport:
    graph: Graph
    format: str
    content_type: str
    filename: str
    contributor: int | None  # set when only the caller's contributions are exported (the World Graph)
    chunks: Iterator[bytes]


def export_format_check(value: str | None) -> str:
    fmt = (value or "").strip().lower()
    if fmt not in EXPORT_FORMATS:
        accepted = ", ".join(EXPORT_FORMATS)
        raise ValidationError(
            f"Unknown export format {str(value or '')[:40]!r}; accepted: {accepted}.",
            code="invalid_export_format",
            hint=f"Send ?format= one of {accepted}.",
        )
    return fmt


def graph_export(*, user: User, graph_id: str, fmt: str | None) -> GraphExport:
    """Check the caller may export the graph and the format, then return the export's byte stream (lazy).

    Raises ValidationError (format), NotFound (no such graph / another account's private graph),
    PermissionDenied (another account's world-scope graph), 503 (the store is down: checked before streaming)."""
    fmt = export_format_check(fmt)
    graph = graph_get_for_user(user=user, graph_id=graph_id)
    contributor: int | None = None
    if graph.is_world:
        contributor = int(user.pk)
    elif graph.owner_id != user.pk:
        raise PermissionDenied(
            f"Graph {graph.id} is another account's shared graph; you can export only your own graphs "
            "and your own contributions to the World Graph.",
            code="graph_export_forbidden",
            hint="Export your own graphs, or GET /api/v1/graphs/world/export/ for your World Graph contributions.",
        )
    store.store_counts(graph.store_name)  # a store that is down is a 503 now, not a truncated file later
    writer: Callable[[Graph, int | None], Iterator[str]] = _WRITERS[fmt]
    content_type, extension = EXPORT_FORMATS[fmt]
    logger.info(
        "graph export graph=%s format=%s user=%s contributor_only=%s", graph.id, fmt, user.pk, bool(contributor)
    )
    return GraphExport(
        graph=graph,
        format=fmt,
        content_type=content_type,
        filename=f"{graph.id}.{extension}",
        contributor=contributor,
        chunks=_encoded(writer(graph, contributor), graph_id=graph.id),
    )


def _encoded(parts: Iterator[str], *, graph_id: str) -> Iterator[bytes]:
    try:
        for part in parts:
            yield part.encode("utf-8")
    except Exception:
        # The status line has gone: the stream ends short (a well-formed file never does) and the log says why.
        logger.exception("graph export of %s stopped mid-stream", graph_id)
        raise


# --- pages -----------------------------------------------------------------------------------------


def _documents(graph: Graph, contributor: int | None) -> Iterator[dict[str, Any]]:
    after = ""
    while True:
        page = store.store_export_documents(graph.store_name, after=after, limit=EXPORT_PAGE, contributor=contributor)
        yield from page
        if len(page) < EXPORT_PAGE:
            return
        after = page[-1]["id"]


def _entities(graph: Graph, contributor: int | None) -> Iterator[dict[str, Any]]:
    after = ""
    while True:
        page = store.store_export_entities(graph.store_name, after=after, limit=EXPORT_PAGE, contributor=contributor)
        yield from page
        if len(page) < EXPORT_PAGE:
            return
        after = page[-1]["id"]


def _relations(graph: Graph, contributor: int | None) -> Iterator[dict[str, Any]]:
    """Relations with their evidence: [{chunk_id, document_id, page}] (only the contributor's documents' chunks)."""
    after: str | None = ""
    while after is not None:
        page, after = store.store_export_relations(
            graph.store_name, after=after, limit=EXPORT_PAGE, contributor=contributor
        )
        places = store.store_chunk_places(graph.store_name, sorted({c for r in page for c in r["chunk_ids"]}))
        for relation in page:
            documents = set(relation["document_ids"])
            evidence = [
                {"chunk_id": cid, "document_id": places[cid][0], "page": places[cid][1]}
                for cid in relation["chunk_ids"]
                if cid in places and (contributor is None or places[cid][0] in documents)
            ]
            relation["chunk_ids"] = [e["chunk_id"] for e in evidence]
            relation["evidence"] = evidence
            yield relation


def _passages(graph: Graph, contributor: int | None) -> Iterator[dict[str, Any]]:
    for document in _documents(graph, contributor):
        for chunk in store.store_export_document_chunks(graph.store_name, document["id"]):
            yield {"document_id": document["id"], **chunk}


def _header(graph: Graph, contributor: int | None) -> dict[str, Any]:
    return {
        "graph_id": graph.id,
        "name": graph.name,
        "scope": graph.scope,
        "contributions_of": contributor,
        "embedding_model": graph.embedding_model,
    }


# --- writers ---------------------------------------------------------------------------------------


def _jsonl(graph: Graph, contributor: int | None) -> Iterator[str]:
    def line(record: str, body: dict[str, Any]) -> str:
        return json.dumps({"record": record, **body}, ensure_ascii=False) + "\n"

    yield line("graph", _header(graph, contributor))
    for document in _documents(graph, contributor):
        yield line("document", document)
    for entity in _entities(graph, contributor):
        yield line("entity", entity)
    for relation in _relations(graph, contributor):
        yield line("relation", relation)
    for passage in _passages(graph, contributor):
        yield line("passage", passage)


CSV_COLUMNS = [
    "record",
    "id",
    "name",
    "type",
    "description",
    "aliases",
    "source",
    "target",
    "strength",
    "document_ids",
    "chunk_ids",
    "pages",
    "filename",
    "title",
    "source_url",
]


def _csv(graph: Graph, contributor: int | None) -> Iterator[str]:
    """One table, a `record` column telling documents, entities and relations apart; lists joined with '|'."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, extrasaction="ignore")

    def row(values: dict[str, Any]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(values)
        return buffer.getvalue()

    buffer.seek(0)
    writer.writeheader()
    yield buffer.getvalue()
    for document in _documents(graph, contributor):
        yield row({"record": "document", **document})
    for entity in _entities(graph, contributor):
        yield row(
            {
                "record": "entity",
                **entity,
                "aliases": LIST_SEPARATOR.join(entity["aliases"]),
                "document_ids": LIST_SEPARATOR.join(entity["document_ids"]),
            }
        )
    for relation in _relations(graph, contributor):
        yield row(
            {
                "record": "relation",
                "type": relation["type"],
                "source": relation["source"],
                "target": relation["target"],
                "strength": relation["strength"],
                "document_ids": LIST_SEPARATOR.join(relation["document_ids"]),
                "chunk_ids": LIST_SEPARATOR.join(relation["chunk_ids"]),
                "pages": LIST_SEPARATOR.join("" if e["page"] is None else str(e["page"]) for e in relation["evidence"]),
            }
        )


_GRAPHML_KEYS = [
    # (id, for, name, type)
    ("name", "node", "name", "string"),
    ("type", "node", "type", "string"),
    ("description", "node", "description", "string"),
    ("aliases", "node", "aliases", "string"),
    ("node_documents", "node", "document_ids", "string"),
    ("relation", "edge", "type", "string"),
    ("strength", "edge", "strength", "int"),
    ("edge_documents", "edge", "document_ids", "string"),
    ("chunks", "edge", "chunk_ids", "string"),
    ("pages", "edge", "pages", "string"),
]


def _graphml(graph: Graph, contributor: int | None) -> Iterator[str]:
    """GraphML (a directed multigraph): entities are nodes, relations edges; lists are '|'-joined strings."""

    def data(key: str, value: Any) -> str:
        return f'<data key="{key}">{escape(str(value))}</data>'

    yield (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
        'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
    )
    for key, target, name, kind in _GRAPHML_KEYS:
        yield f'<key id="{key}" for="{target}" attr.name="{name}" attr.type="{kind}"/>\n'
    yield f'<graph id={quoteattr(graph.id)} edgedefault="directed">\n'
    for entity in _entities(graph, contributor):
        yield (
            f"<node id={quoteattr(entity['id'])}>"
            + data("name", entity["name"])
            + data("type", entity["type"])
            + data("description", entity["description"])
            + data("aliases", LIST_SEPARATOR.join(entity["aliases"]))
            + data("node_documents", LIST_SEPARATOR.join(entity["document_ids"]))
            + "</node>\n"
        )
    for relation in _relations(graph, contributor):
        pages = LIST_SEPARATOR.join("" if e["page"] is None else str(e["page"]) for e in relation["evidence"])
        yield (
            f"<edge source={quoteattr(relation['source'])} target={quoteattr(relation['target'])}>"
            + data("relation", relation["type"])
            + data("strength", relation["strength"])
            + data("edge_documents", LIST_SEPARATOR.join(relation["document_ids"]))
            + data("chunks", LIST_SEPARATOR.join(relation["chunk_ids"]))
            + data("pages", pages)
            + "</edge>\n"
        )
    yield "</graph>\n</graphml>\n"


def _jsonld(graph: Graph, contributor: int | None) -> Iterator[str]:
    """JSON-LD with an inline context (no remote fetch): Entity, Relation (a node carrying its source, target,
    type and provenance) and Document nodes; ids are URNs of the graph."""
    base = f"urn:exograph:{graph.id}:"
    context = {
        "@vocab": VOCAB,
        "source": {"@type": "@id"},
        "target": {"@type": "@id"},
        "document": {"@type": "@id"},
        "evidenceChunk": {"@type": "@id"},
    }
    yield '{"@context": ' + json.dumps(context) + ', "@graph": [\n'
    # The graph itself is a node of the default graph (an @id beside @graph would make the file one named graph).
    yield json.dumps(
        {
            "@id": f"urn:exograph:{graph.id}",
            "@type": "Graph",
            "identifier": graph.id,
            "name": graph.name,
            **({"contributionsOf": contributor} if contributor is not None else {}),
        },
        ensure_ascii=False,
    )

    def item(node: dict[str, Any]) -> str:
        return ",\n" + json.dumps(node, ensure_ascii=False)

    for document in _documents(graph, contributor):
        yield item(
            {
                "@id": f"{base}document:{document['id']}",
                "@type": "Document",
                "identifier": document["id"],
                "filename": document["filename"],
                "title": document["title"],
                "sourceUrl": document["source_url"],
            }
        )
    for entity in _entities(graph, contributor):
        yield item(
            {
                "@id": f"{base}entity:{entity['id']}",
                "@type": "Entity",
                "identifier": entity["id"],
                "name": entity["name"],
                "entityType": entity["type"],
                "description": entity["description"],
                "alias": entity["aliases"],
                "document": [f"{base}document:{d}" for d in entity["document_ids"]],
            }
        )
    for relation in _relations(graph, contributor):
        yield item(
            {
                "@id": f"{base}relation:{relation['source']}:{relation['type']}:{relation['target']}",
                "@type": "Relation",
                "relationType": relation["type"],
                "source": f"{base}entity:{relation['source']}",
                "target": f"{base}entity:{relation['target']}",
                "strength": relation["strength"],
                "document": [f"{base}document:{d}" for d in relation["document_ids"]],
                "evidenceChunk": [f"{base}chunk:{e['chunk_id']}" for e in relation["evidence"]],
                "evidence": [
                    {"chunkId": e["chunk_id"], "documentId": e["document_id"], "page": e["page"]}
                    for e in relation["evidence"]
                ],
            }
        )
    yield "\n]}\n"


_WRITERS: dict[str, Callable[[Graph, int | None], Iterator[str]]] = {
    "graphml": _graphml,
    "jsonl": _jsonl,
    "csv": _csv,
    "jsonld": _jsonld,
}
