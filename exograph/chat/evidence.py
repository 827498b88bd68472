"""The one adapter between chat and Retrieve: evidence items for an engine (rag | graph), unnumbered.

Today it reads `exograph.graphs.selectors.retrieve`; when `exograph/graphs/retrieval.py` lands, only
this module changes (rag → mode "passages", graph → mode "graph"). Items are plain dicts:
{kind, text, origin (private|world|web), graph_id, document_id, source, url, page, chunk_id}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from exograph.accounts.models import User
from exograph.core.scope import Scope
from exograph.graphs.models import WORLD_GRAPH_ID

ENGINES = ("rag", "graph", "web")


@dataclass
class EvidenceSet:
    items: list[dict[str, Any]] = field(default_factory=list)
    contributor_ids: list[int] = field(default_factory=list)  # world-graph contributors (billing earnings)


def _item(raw: dict[str, Any]) -> dict[str, Any]:
    graph_id = str(raw.get("graph_id") or "")
    return {
        "kind": raw.get("kind", "passage"),
        "text": str(raw.get("text") or ""),
        "origin": "world" if graph_id == WORLD_GRAPH_ID else "private",
        "graph_id": graph_id,
        "document_id": raw.get("document_id"),
        "source": str(raw.get("source") or ""),
        "url": raw.get("url"),
        "page": raw.get("page"),
        "chunk_id": raw.get("chunk_id"),
    }


def evidence_retrieve(
    *, actor: User, question: str, engine: str, scope: Scope, graph_id: str | None, limit: int = 12
) -> EvidenceSet:
    """Evidence for question from the graphs actor may read (engine rag: passages only; graph: entities,
    relations and passages). Pure read. Raises NotFound (graph_id), ServiceUnavailable (graph store down)."""
    from exograph.graphs.selectors import retrieve

    found = retrieve(user=actor, query=question, scope=scope, graph_id=graph_id or None, hops=2)
    raw_items = found["items"]
    if engine == "rag":
        raw_items = [item for item in raw_items if item.get("kind") == "passage"]
    else:  # graph: the connecting relations first, then the passages, then the entities
        order = {"relation": 0, "fact": 0, "passage": 1, "entity": 2}
        raw_items = sorted(raw_items, key=lambda item: order.get(str(item.get("kind")), 3))
    items = [_item(raw) for raw in raw_items if raw.get("text")][:limit]
    world = any(item["origin"] == "world" for item in items)
    return EvidenceSet(items=items, contributor_ids=list(found["contributor_ids"]) if world else [])
