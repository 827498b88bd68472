"""The one adapter between chat and Retrieve: evidence items for an engine (rag | graph), unnumbered.

Reads `exograph.graphs.retrieval` (rag → mode "passages", graph → mode "graph"). Items are plain dicts:
{kind, text, origin (private|world|web), graph_id, document_id, source, url, page, chunk_id, view_url}; view_url
opens the document viewer at the passage when the document is the asker's (else None).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from exograph.accounts.models import User
from exograph.core.language import language_text, text_is_language
from exograph.core.llm.extractive_overview import DOCUMENTS, asks_overview
from exograph.core.scope import Scope
from exograph.documents.selectors import evidence_view_urls
from exograph.graphs.retrieval import Evidence, retrieve_for_user
from exograph.graphs.selectors import document_openings_read

ENGINES = ("rag", "graph", "web")


@dataclass
class EvidenceSet:
    items: list[dict[str, Any]] = field(default_factory=list)
    contributor_ids: list[int] = field(default_factory=list)  # world-graph contributors (billing earnings)


def _answerable(evidence: Evidence) -> bool:
    """Evidence an answer may quote: anything with text, but not a passage that is mostly non-language
    (figure glyphs, OCR debris, a bare grid of numbers: core.language); such passages stay searchable."""
    return bool(evidence.text) and (evidence.kind != "passage" or text_is_language(evidence.text))


def _item(evidence: Evidence) -> dict[str, Any]:
    return {
        "kind": evidence.kind,
        "text": language_text(evidence.text) if evidence.kind == "passage" else evidence.text,
        "origin": evidence.origin,
        "graph_id": evidence.graph_id,
        "document_id": evidence.document_id,
        "source": evidence.source,
        "url": evidence.url,
        "page": evidence.page,
        "chunk_id": evidence.chunk_id,
    }


MODES = {"rag": "passages", "graph": "graph"}


def evidence_retrieve(
    *, actor: User, question: str, engine: str, scope: Scope, graph_id: str | None, limit: int = 12
) -> EvidenceSet:
    """Evidence for question from the graphs actor may read (engine rag: passages only; graph: facts, relations,
    passages and entities from the graph walk and its ranking); passages that are mostly non-language are left
    out and runs of glyphs are cut from the others (core.language). Pure read. Raises NotFound (graph_id),
    ServiceUnavailable (graph store down)."""
    found = retrieve_for_user(
        actor=actor, question=question, scope=scope, graph_id=graph_id or None, mode=MODES[engine], top_k=limit, hops=2
    )
    answerable = [_item(evidence) for evidence in found.items if _answerable(evidence)]
    if asks_overview(question):  # "What is this document about?": its opening, whatever the search ranked first
        answerable = _openings_first(answerable)
    items = evidence_view_urls(user=actor, items=answerable[:limit])
    world = any(item["origin"] == "world" for item in items)
    return EvidenceSet(items=items, contributor_ids=list(found.contributor_ids) if world else [])


def _openings_first(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The opening passage of each of the first DOCUMENTS documents among the passages found (the ones the reader's
    overview opens), first, in the order the search ranked the documents; the other items after them (without those
    passages twice)."""
    firsts: dict[str, dict[str, Any]] = {}
    for item in items:
        if item["kind"] == "passage" and item["document_id"] and item["document_id"] not in firsts:
            firsts[item["document_id"]] = item
            if len(firsts) >= DOCUMENTS:
                break
    openings = document_openings_read(documents=[(str(i["graph_id"]), doc) for doc, i in firsts.items()])
    opened = [
        {**first, "text": language_text(opening["text"]), "chunk_id": opening["chunk_id"], "page": opening["page"]}
        for doc, first in firsts.items()
        if (opening := openings.get(doc)) and text_is_language(opening["text"])
    ]
    chunk_ids = {item["chunk_id"] for item in opened}
    return [*opened, *(item for item in items if item["chunk_id"] not in chunk_ids or item["kind"] != "passage")]
