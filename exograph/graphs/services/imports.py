"""Import of facts into a private graph: triples (subject, predicate, object, optional source and evidence text)
as JSON Lines or CSV, or a graph's own export (jsonl or csv) read back.

The whole batch is read and validated before anything is charged or written: a bad row refuses the batch with its
line number (400 invalid_import_row, `line` and `field` in the envelope). Priced per started 1,000 rows (action
"import", billing/prices.py): a triple or an entity record is a row; a dry run quotes it.

What a batch becomes: one store document per source (rows without a source share one, named after the import),
written by graphs.services.ingest.graph_document_write like any document's knowledge, so facts are found by the
search, walked by graph mode and cited by chat with their source as provenance (the Document node's title,
source_url when the source is a URL, source_type "import"). Each distinct evidence text is a passage (chunk) of
its source; a triple without evidence gets its own sentence ("Subject predicate object.") as passage, so the fact
itself is searchable. The passage mentions both ends and is the relation's evidence.

Entities are resolved against what the graph already holds, as the store resolves names (store_entity_find's rule,
batched in store/resolve.py: the stable id of name and type, else the same normalised name, else an alias): a
subject that names an entity already in the graph joins that entity (its name and type; the imported spelling
becomes an alias) instead of making a second one. Rows that name one thing alike (same normalised name and type) are one entity, as in documents.

A store document's id is a digest of the graph, the source and the rows: importing the same rows again changes
nothing (a document already there is left as it is). If a write fails part-way, the documents this import wrote
are removed again and the charge is refunded: nothing is half-written.

The rows are read and checked in import_rows.py.
"""

from __future__ import annotations

import hashlib
import logging
import math
from dataclasses import dataclass, field
from typing import Any

from exograph.accounts.models import User
from exograph.core.errors import ValidationError
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.embeddings import chunk_embedding_text
from exograph.graphs.models import Graph
from exograph.graphs.selectors import embedder_check, graph_get_for_user
from exograph.graphs.services.import_rows import DEFAULT_TYPE, Declared, Triple, import_parse
from exograph.graphs.services.ingest import graph_document_remove, graph_document_write
from exograph.graphs.store.resolve import store_entities_resolve
from exograph.graphs.types import (
    ChunkIn,
    EntityIn,
    MentionIn,
    RelationIn,
    entity_id_for,
    normalize_name,
    normalize_type,
)

logger = logging.getLogger(__name__)


IMPORT_ACTION = "import"
ROWS_PER_UNIT = 1000


@dataclass
class _Source:
    """One store document of the import: its passages (text -> page), entities, mentions and relations."""

    name: str
    passages: dict[str, int | None] = field(default_factory=dict)
    triples: list[Triple] = field(default_factory=list)
    declared: list[Declared] = field(default_factory=list)


@dataclass(frozen=True)
class PreparedImport:
    graph: Graph
    format: str
    rows: int
    triples: list[Triple]
    declared: list[Declared]

    @property
    def units(self) -> int:
        """Billing units: started thousands of rows."""
        return max(1, math.ceil(self.rows / ROWS_PER_UNIT))


def graph_import_prepare(*, actor: User, graph_id: str, content: str, fmt: str) -> PreparedImport:
    """Check the graph is the actor's own private graph and read the batch. Raises NotFound, PermissionDenied,
    ValidationError (the graph is world-scope; a bad row, with its line)."""
    graph = graph_get_for_user(user=actor, graph_id=graph_id, write=True)
    if graph.scope != Scope.PRIVATE or graph.is_world:
        raise ValidationError(
            f"Graph {graph.id} is shared (world scope): facts import only into a private graph.",
            code="graph_not_private",
            hint="Create a private graph (POST /api/v1/graphs/) and import into it.",
        )
    triples, declared, rows = import_parse(content=content, fmt=fmt)
    return PreparedImport(graph=graph, format=fmt, rows=rows, triples=triples, declared=declared)


def graph_import_quote(*, actor: User, prepared: PreparedImport) -> dict[str, Any]:
    """The dry run's answer: the price of the batch and whether it is covered, with its counts. Pure read."""
    from billing.services import credits_quote, quote_out

    quote = credits_quote(account=actor, action=IMPORT_ACTION, units=prepared.units)
    return {**quote_out(quote), **_counts(prepared)}


def _counts(prepared: PreparedImport) -> dict[str, Any]:
    return {
        "graph_id": prepared.graph.id,
        "format": prepared.format,
        "rows": prepared.rows,
        "triples": len(prepared.triples),
        "entity_records": len(prepared.declared),
    }


def _resolve(
    graph: Graph, names: dict[tuple[str, str], str | None]
) -> tuple[dict[tuple[str, str], tuple[str, str]], int]:
    """(key, requested type) -> (name, type) to write under, and how many joined an entity the graph held."""
    pairs = list(names.items())
    held = store_entities_resolve(
        graph.store_name, [(entity_id_for(surface or key, kind or DEFAULT_TYPE), key) for (key, kind), surface in pairs]
    )
    resolved: dict[tuple[str, str], tuple[str, str]] = {}
    joined = 0
    for ((key, kind), surface), entity in zip(pairs, held, strict=True):
        if entity and entity["name"]:
            resolved[(key, kind)] = (entity["name"], entity["type"] or DEFAULT_TYPE)
            joined += 1
        else:
            resolved[(key, kind)] = (surface or key, kind or DEFAULT_TYPE)
    return resolved, joined


def _sentence(triple: Triple) -> str:
    predicate = triple.predicate.replace("_", " ")
    if predicate.isupper():
        predicate = predicate.lower()
    return f"{triple.subject} {predicate} {triple.object}."


def _document_id(graph: Graph, source: _Source) -> str:
    digest = hashlib.sha256()
    digest.update(f"{graph.id}\x1f{source.name}".encode())
    for t in source.triples:
        digest.update(
            f"\x1e{t.subject}\x1f{t.subject_type}\x1f{t.predicate}\x1f{t.object}\x1f{t.object_type}"
            f"\x1f{t.evidence}\x1f{t.page}\x1f{t.weight}".encode()
        )
    for d in source.declared:
        digest.update(f"\x1d{d.name}\x1f{d.type}\x1f{d.description}\x1f{'|'.join(d.aliases)}".encode())
    return "imp_" + digest.hexdigest()[:32]


def graph_import(*, actor: User, prepared: PreparedImport, idempotency_key: str) -> dict[str, Any]:
    """Charge the batch (per started 1,000 rows, once per idempotency_key), resolve its entities against the graph
    and write it, one store document per source. On a failed write the documents written are removed and the
    charge refunded. Returns the counts, credits_charged and balance. Raises InsufficientCredits (402),
    KeyCapReached (403), ServiceUnavailable (503: the store), with nothing written or kept charged."""
    from billing.services import credits_charge, credits_refund

    graph = prepared.graph
    embedder = embedder_check(graph=graph)
    names: dict[tuple[str, str], str | None] = {}

    def wanted(name: str, kind: str | None) -> tuple[str, str]:
        pair = (normalize_name(name), normalize_type(kind) if kind else "")
        names.setdefault(pair, name)
        return pair

    sources: dict[str, _Source] = {}
    for triple in prepared.triples:
        wanted(triple.subject, triple.subject_type)
        wanted(triple.object, triple.object_type)
        sources.setdefault(triple.source, _Source(name=triple.source)).triples.append(triple)
    for entity in prepared.declared:
        wanted(entity.name, entity.type)
        sources.setdefault(entity.source, _Source(name=entity.source)).declared.append(entity)

    charge = credits_charge(
        account=actor,
        action=IMPORT_ACTION,
        units=prepared.units,
        idempotency_key=idempotency_key,
        reference=f"import into {graph.id}",
    )
    written: list[str] = []
    try:
        resolved, joined = _resolve(graph, names)
        unchanged = 0
        existing = set(store.store_document_names(graph.store_name, [_document_id(graph, s) for s in sources.values()]))
        for source in sources.values():
            document_id = _document_id(graph, source)
            if document_id in existing:
                unchanged += 1
                continue
            _source_write(graph, source, document_id, resolved, actor, embedder)
            written.append(document_id)
    except BaseException:
        for document_id in written:
            try:
                graph_document_remove(graph=graph, document_id=document_id)
            except Exception:  # the store is down: the sweep cannot know it; logged with the ids
                logger.exception("import into %s: could not remove document %s again", graph.id, document_id)
        credits_refund(account=actor, charge_key=idempotency_key, reason="import not written")
        raise
    logger.info(
        "import into graph %s: %d rows, %d documents written, %d unchanged, %d entities joined",
        graph.id,
        prepared.rows,
        len(written),
        unchanged,
        joined,
    )
    return {
        **_counts(prepared),
        "entities": len(names),
        "entities_joined": joined,
        "documents_written": len(written),
        "documents_unchanged": unchanged,
        "credits_charged": charge.credits_charged,
        "balance": charge.balance,
    }


def _source_write(
    graph: Graph,
    source: _Source,
    document_id: str,
    resolved: dict[tuple[str, str], tuple[str, str]],
    actor: User,
    embedder: Any,
) -> None:
    def end(name: str, kind: str | None) -> tuple[str, str]:
        return resolved[(normalize_name(name), normalize_type(kind) if kind else "")]

    passages: dict[str, int] = {}
    pages: dict[str, int | None] = {}
    for triple in source.triples:
        text = triple.evidence or _sentence(triple)
        if text not in passages:
            passages[text] = len(passages)
            pages[text] = triple.page
    texts = list(passages)
    vectors = embedder.embed([chunk_embedding_text(text, title=source.name) for text in texts]) if texts else []
    chunks = [
        ChunkIn(id=f"{document_id}:{i}", text=text, page=pages[text], ordinal=i, embedding=list(vector))
        for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
    ]
    entities: list[EntityIn] = []
    for declared in source.declared:
        name, kind = end(declared.name, declared.type)
        aliases = tuple(a for a in (declared.name, *declared.aliases) if a != name)
        entities.append(EntityIn(name=name, type=kind, description=declared.description, aliases=aliases))
    mentions: list[MentionIn] = []
    relations: list[RelationIn] = []
    for triple in source.triples:
        chunk_id = f"{document_id}:{passages[triple.evidence or _sentence(triple)]}"
        subject, subject_type = end(triple.subject, triple.subject_type)
        obj, object_type = end(triple.object, triple.object_type)
        for name, kind, surface in ((subject, subject_type, triple.subject), (obj, object_type, triple.object)):
            if surface != name:  # the imported spelling of an entity the graph held: an alias of it
                entities.append(EntityIn(name=name, type=kind, aliases=(surface,)))
            mentions.append(MentionIn(chunk_id=chunk_id, entity_name=name, entity_type=kind))
        relations.append(
            RelationIn(
                source_name=subject,
                source_type=subject_type,
                target_name=obj,
                target_type=object_type,
                type=triple.predicate,
                chunk_ids=(chunk_id,),
                weight=triple.weight,
            )
        )
    is_url = source.name.startswith(("http://", "https://"))
    graph_document_write(
        graph=graph,
        document_id=document_id,
        filename=source.name or "import",
        contributor=actor,
        chunks=chunks,
        entities=entities,
        mentions=mentions,
        relations=relations,
        provenance={
            "title": source.name or "Imported facts",
            "source_url": source.name if is_url else "",
            "source_type": "import",
            "published": "",
        },
    )
