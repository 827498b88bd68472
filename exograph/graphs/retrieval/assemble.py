"""Evidence assembly: the reads of every graph ranked together into typed evidence within the character budget."""

from __future__ import annotations

import re

from exograph.accounts.models import User
from exograph.core.snippets import snippet
from exograph.graphs import store
from exograph.graphs.models import WORLD_GRAPH_ID, GraphKind
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
    # Spare candidates stand in for passages that turn out to repeat a better one's text (_Seen, below).
    ranked_passages = _distinct(
        sorted(((score, r, cid) for r in reads for cid, score in r.passages.items()), key=lambda t: (-t[0], t[2])),
        top_k * 2,
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
    passage_keys = _unrepeated(ranked_passages, chunk_rows, top_k)
    seen = _Seen()  # what the passages show, for the facts' passages below
    for read, cid in passage_keys:
        seen.add(str(chunk_rows[read.graph.id][cid]["text"] or ""))
    ranked_count = len(passage_keys)
    for _, read, relation in facts:
        if relation.chunk_ids and (read, relation.chunk_ids[0]) not in passage_keys:
            passage_keys.append((read, relation.chunk_ids[0]))
    cited_chunks: set[str] = set()
    for index, (read, cid) in enumerate(passage_keys):
        row = chunk_rows[read.graph.id].get(cid)
        if row is None or cid in cited_chunks:
            continue  # deleted between the reads, or the same passage already taken from another graph
        if index >= ranked_count:  # a fact's passage: not when its text is already shown
            if seen.holders(str(row["text"] or "")) is not None:
                continue
            seen.add(str(row["text"] or ""))
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


# A passage's pieces: its sentences and paragraphs. A paragraph opening it with no sentence end and a few words is
# the section heading chunking repeats above a section's later passages (context, not text).
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;:])\s+|\n\s*\n")
_HEADING_LINE = re.compile(r"^\s*(?P<line>[^\n]{1,120})\n\s*\n")
_PIECE_WORDS = 4  # shorter pieces ("Rides", "See below.") say too little to tell a repeat


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


class _Seen:
    """The texts of the passages taken so far, to refuse one that shows nothing new. A research session reads a
    document it finds and ingests the text as a document of its own graph: the same sentences come back under other
    chunk ids, cut at other places (its windows run over the original's passages joined, overlaps included) and
    without the heading line, so neither chunk ids nor whole texts match; every sentence of the copy is found in a
    passage already taken, though. A piece cut short at a window's edge is found inside its whole sentence."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def holders(self, text: str) -> list[int] | None:
        """The indices of the taken passages holding the pieces of `text`, or None when it shows something new."""
        heading = _HEADING_LINE.match(text)
        if heading is not None and not re.search(r"[.!?]\s*$", heading.group("line")):
            text = text[heading.end() :]
        pieces = [_flat(part) for part in _SENTENCE_BREAK.split(text)]
        pieces = [piece for piece in pieces if len(piece.split()) >= _PIECE_WORDS]
        found: list[int] = []
        for piece in pieces:
            holder = next((i for i, taken in enumerate(self.texts) if piece in taken), None)
            if holder is None:
                return None
            found.append(holder)
        return found or None

    def add(self, text: str) -> None:
        self.texts.append(_flat(text))


def _unrepeated(
    ranked: list[tuple[float, GraphRead, str]], chunk_rows: dict[str, dict[str, dict]], top_k: int
) -> list[tuple[GraphRead, str]]:
    """The first top_k ranked passages that show something new (_Seen). Where two say the same, the document itself
    is kept over a research session's copy of it, in the better rank of the two: research finds its sources by this
    read and skips its own copies (research.selectors.research_copies), and a citation names the original."""
    seen = _Seen()
    rows = [(position, read, cid) for position, (_, read, cid) in enumerate(ranked) if cid in chunk_rows[read.graph.id]]
    place: dict[int, int] = {}  # index in `rows` of a kept passage -> its place in the answer
    kept: list[int] = []  # the same indices, in the order they were taken (seen.texts' order)
    for index in sorted(range(len(rows)), key=lambda i: (rows[i][1].graph.kind == GraphKind.RESEARCH, rows[i][0])):
        position, read, cid = rows[index]
        text = str(chunk_rows[read.graph.id][cid]["text"] or "")
        holders = seen.holders(text)
        if holders is None:
            seen.add(text)
            kept.append(index)
            place[index] = position
            continue
        for holder in holders:  # the passage that says it takes the better place
            place[kept[holder]] = min(place[kept[holder]], position)
    chosen = sorted(place, key=lambda i: (place[i], rows[i][0]))[:top_k]
    return [(rows[i][1], rows[i][2]) for i in chosen]


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
