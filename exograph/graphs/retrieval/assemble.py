"""Evidence assembly: the reads of every graph ranked together into typed evidence within the character budget."""

from __future__ import annotations

from exograph.accounts.models import User
from exograph.core.snippets import snippet
from exograph.graphs import store
from exograph.graphs.models import WORLD_GRAPH_ID
from exograph.graphs.retrieval.checks import origin_of
from exograph.graphs.retrieval.paths import search_pool
from exograph.graphs.retrieval.types import (
    PASSAGE_CHARS,
    Evidence,
    GraphRead,
    Kind,
    Mode,
    Relation,
    RetrievalResult,
)
from exograph.graphs.selectors.search import RRF_K


def assemble(
    *, actor: User, reads: list[GraphRead], mode: Mode, question: str, top_k: int, budget: int
) -> RetrievalResult:
    contributors: set[int] = set()
    ranked_passages = _distinct(
        sorted(((score, r, cid) for r in reads for cid, score in r.passages.items()), key=lambda t: (-t[0], t[2])),
        top_k,
    )
    # Facts cite their passages: in graph mode the passages a top fact was extracted from come along.
    fact_rows = sorted(
        ((score, r, triple) for r in reads for triple, score in r.facts.items()), key=lambda t: (-t[0], t[2])
    )
    seen_triples: set[tuple[str, str, str]] = set()
    facts: list[tuple[float, GraphRead, Relation]] = []
    for score, read, triple in fact_rows:
        if triple in seen_triples:
            continue  # one flat fact per exact triple, whichever graph holds it
        seen_triples.add(triple)
        facts.append((score, read, read.fact_relations[triple]))
        if len(facts) >= top_k:
            break
    wanted: dict[str, set[str]] = {r.graph.id: {cid for s, rr, cid in ranked_passages if rr is r} for r in reads}
    for _, read, relation in facts:
        wanted[read.graph.id].update(relation.chunk_ids[:1])
    for read in reads:
        for relation in read.relations:
            wanted[read.graph.id].update(relation.chunk_ids[:1])
    ranked_entities = sorted(
        ((score, r, eid) for r in reads for eid, score in r.entities.items()), key=lambda t: (-t[0], t[2])
    )[:top_k]
    pending_details = {  # overlaps the passages' read
        r.graph.id: search_pool().submit(
            store.store_entities, r.graph.store_name, [eid for _, rr, eid in ranked_entities if rr is r]
        )
        for r in reads
        if mode != "passages"
    }
    chunk_rows = {r.graph.id: store.store_chunks(r.graph.store_name, sorted(wanted[r.graph.id])) for r in reads}
    items: list[Evidence] = []

    def provenance(read: GraphRead, chunk_id: str | None) -> dict[str, object]:
        row = chunk_rows[read.graph.id].get(chunk_id or "")
        if row is None:
            return {}
        return {
            "document_id": row["document_id"],
            "source": row["title"] or row["filename"],
            "url": row["url"],
            "page": row["page"],
            "chunk_id": chunk_id,
        }

    for score, read, relation in facts:
        items.append(
            _relation_item(actor=actor, read=read, relation=relation, kind="fact", score=score, prov=provenance)
        )
    passage_items: list[Evidence] = []
    passage_keys = [(r, cid) for _, r, cid in ranked_passages]
    for _, read, relation in facts:
        if relation.chunk_ids and (read, relation.chunk_ids[0]) not in passage_keys:
            passage_keys.append((read, relation.chunk_ids[0]))
    cited_chunks: set[str] = set()
    for read, cid in passage_keys:
        row = chunk_rows[read.graph.id].get(cid)
        if row is None or cid in cited_chunks:
            continue  # deleted between the reads, or the same passage already taken from another graph
        cited_chunks.add(cid)
        mentions = tuple(
            sorted({e for rel in read.relations if cid in rel.chunk_ids for e in (rel.source_id, rel.target_id)})
        )
        passage_items.append(
            Evidence(
                kind="passage",
                text=snippet(row["text"], question, limit=PASSAGE_CHARS),
                graph_id=read.graph.id,
                score=read.passages.get(cid, 0.0),
                origin=origin_of(actor=actor, graph=read.graph),
                document_id=row["document_id"],
                source=row["title"] or row["filename"],
                url=row["url"],
                page=row["page"],
                chunk_id=cid,
                entity_ids=mentions,
                chunk_ids=(cid,),
                document_ids=(row["document_id"],) if row["document_id"] else (),
            )
        )
        if read.graph.id == WORLD_GRAPH_ID and row["contributor"] is not None:
            contributors.add(int(row["contributor"]))
    # Passages and facts alternate, best first: a consumer that keeps only the first n items (chat hands the
    # model 12) gets the top passages and the facts that join them, not facts alone.
    fact_items, items = items, []
    for index in range(max(len(fact_items), len(passage_items))):
        items.extend(passage_items[index : index + 1])
        items.extend(fact_items[index : index + 1])
    if mode != "passages":
        details = {graph_id: pending.result() for graph_id, pending in pending_details.items()}
        for score, read, eid in ranked_entities:
            row = details[read.graph.id].get(eid)
            if row is None:
                continue
            body = f"{row['name']} ({row['type']})" + (f": {row['description']}" if row["description"] else "")
            items.append(
                Evidence(
                    kind="entity",
                    text=body,
                    graph_id=read.graph.id,
                    score=score,
                    origin=origin_of(actor=actor, graph=read.graph),
                    entity_ids=(eid,),
                )
            )
            if read.graph.id == WORLD_GRAPH_ID:
                contributors.update(int(c) for c in row["contributors"])
        relations = sorted(
            ((rel.hop, -rel.strength, r, rel) for r in reads for rel in r.relations), key=lambda t: (t[0], t[1])
        )
        for hop, _, read, relation in relations:
            items.append(
                _relation_item(
                    actor=actor,
                    read=read,
                    relation=relation,
                    kind="relation",
                    score=1.0 / (RRF_K + hop),
                    prov=provenance,
                )
            )
    for _, read, relation in facts:
        if read.graph.id == WORLD_GRAPH_ID:
            contributors.update(relation.contributors)
    for read in reads:
        if read.graph.id == WORLD_GRAPH_ID:
            for relation in read.relations:
                contributors.update(relation.contributors)
    kept: list[Evidence] = []
    used = 0
    truncated = False
    for item in items:
        if used + len(item.text) > budget:
            truncated = True
            continue  # a shorter item further down may still fit
        used += len(item.text)
        kept.append(item)
    return RetrievalResult(mode=mode, items=kept, contributor_ids=sorted(contributors), truncated=truncated)


def _distinct(ranked: list[tuple[float, GraphRead, str]], top_k: int) -> list[tuple[float, GraphRead, str]]:
    """The first top_k passages, each chunk once: a document shared to the World Graph is read there and in its
    owner's world graph under the same chunk id (its best-ranked copy is kept)."""
    kept: list[tuple[float, GraphRead, str]] = []
    seen: set[str] = set()
    for row in ranked:
        if row[2] not in seen:
            seen.add(row[2])
            kept.append(row)
            if len(kept) >= top_k:
                break
    return kept


def _relation_item(*, actor: User, read: GraphRead, relation: Relation, kind: Kind, score: float, prov) -> Evidence:  # type: ignore[no-untyped-def]
    subject, predicate, obj = relation.triple
    first = relation.chunk_ids[0] if relation.chunk_ids else None
    where = prov(read, first)
    return Evidence(
        kind=kind,
        text=f"{subject} {predicate} {obj}",
        graph_id=read.graph.id,
        score=score,
        origin=origin_of(actor=actor, graph=read.graph),
        document_id=where.get("document_id") or (relation.document_ids[0] if relation.document_ids else None),
        source=str(where.get("source") or ""),
        url=where.get("url"),  # type: ignore[arg-type]
        page=where.get("page"),  # type: ignore[arg-type]
        chunk_id=first,
        entity_ids=(relation.source_id, relation.target_id),
        chunk_ids=tuple(relation.chunk_ids),
        document_ids=tuple(relation.document_ids),
        triple=relation.triple,
    )
