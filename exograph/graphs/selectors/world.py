"""The World Graph's entities: one entity with its related entities and contributors, and name suggestions."""

from __future__ import annotations

from typing import Any, TypedDict

from exograph.accounts.models import User
from exograph.core.errors import NotFound
from exograph.core.snippets import snippet
from exograph.documents.selectors import document_view_url, documents_viewable
from exograph.graphs import store
from exograph.graphs.models import WORLD_GRAPH_ID, Graph
from exograph.graphs.selectors.graphs import embedder_check
from exograph.graphs.selectors.search import VECTOR_OVERFETCH, _check_entity, _check_n_results, _fuse
from exograph.graphs.types import RelatedEntity, WorldEntityView, normalize_name

MAX_RELATED = 100
PASSAGE = 500


class WorldEntityRead(TypedDict):
    view: WorldEntityView
    contributor_ids: list[int]


def world_entity_read(*, user: User, entity: str, evidence: bool = False, limit: int = 25) -> WorldEntityRead:
    """An entity of the World Graph (by id or by name, case- and accent-insensitive) with its related
    entities, strongest first, and the ids of the accounts who contributed them.

    Raises ValidationError, NotFound (with `suggestions`), 503."""
    text = _check_entity(entity, field="entity_id")
    limit = _check_n_results(limit, name="limit", maximum=MAX_RELATED)
    world = Graph.objects.get(id=WORLD_GRAPH_ID)
    entity_id = store.store_entity_find(world.store_name, entity_id=text, key=normalize_name(text))
    if entity_id is None:
        raise entity_not_found(
            graph=world, text=text, where="the World Graph", search="GET /api/v1/entities/search?graph_scope=world"
        )
    center = store.store_entities(world.store_name, [entity_id])[entity_id]
    related_rows = store.store_related(world.store_name, entity_id=entity_id, limit=limit)
    document_ids = sorted({doc for row in related_rows for doc in row["document_ids"]})
    names = store.store_document_names(world.store_name, document_ids)
    passages: dict[str, dict[str, Any]] = {}
    if evidence:
        wanted = [cid for row in related_rows for cid in row["chunk_ids"][:3]]
        passages = store.store_passages(world.store_name, wanted)
    viewable = documents_viewable(user=user, document_ids={p["document_id"] for p in passages.values()})
    related: list[RelatedEntity] = []
    contributors = set(center["contributors"])
    for row in related_rows:
        item: RelatedEntity = {
            "id": row["id"],
            "name": row["name"],
            "type": row["type"],
            "relationship": row["relationship"].lower(),
            "direction": row["direction"],
            "strength": row["strength"],
            "sources": sorted({names[doc] for doc in row["document_ids"] if names.get(doc)}),
        }
        if evidence:
            item["evidence"] = [
                {
                    "document": passages[cid]["document"],
                    "page": passages[cid]["page"],
                    "text": snippet(passages[cid]["text"], center["name"], limit=PASSAGE),
                    "view_url": document_view_url(
                        passages[cid]["document_id"], page=passages[cid]["page"], chunk_id=cid
                    )
                    if str(passages[cid]["document_id"]) in viewable
                    else None,
                }
                for cid in row["chunk_ids"][:3]
                if cid in passages
            ]
        contributors.update(row["contributors"])
        related.append(item)
    view: WorldEntityView = {
        "entity": {
            "id": center["id"],
            "name": center["name"],
            "type": center["type"],
            "description": center["description"],
            "aliases": center["aliases"],
            "mentions": center["mentions"],
            "graph_id": WORLD_GRAPH_ID,
        },
        "related": related,
        "count": len(related),
    }
    return {"view": view, "contributor_ids": sorted(int(c) for c in contributors)}


def entity_not_found(*, graph: Graph, text: str, where: str, search: str) -> NotFound:
    """The NotFound for an entity missing from graph (`where` names it), with its closest names as `suggestions`."""
    suggestions = world_entity_suggestions(world=graph, text=text)
    return NotFound(
        f"No entity {text[:80]!r} in {where}.",
        code="entity_not_found",
        hint=("Did you mean: " + ", ".join(suggestions) + "?") if suggestions else f"Search with {search}.",
        extra={"suggestions": suggestions},
    )


def world_entity_suggestions(*, world: Graph, text: str, n: int = 5) -> list[str]:
    """The closest entity names in the World Graph (full-text and vector, fused)."""
    embedder = embedder_check(graph=world)
    lists = store.store_search_lists(
        world.store_name,
        text_query=store.fulltext_query(text),
        vector=[float(x) for x in embedder.embed_one(text)],
        k=10,
        vector_k=10 + VECTOR_OVERFETCH,
        chunks=False,
    )
    scores, _, _ = _fuse({WORLD_GRAPH_ID: lists})
    ranked = sorted(scores, key=lambda key: -scores[key])[:n]
    found = store.store_entities(world.store_name, [eid for _, eid in ranked])
    return [found[eid]["name"] for _, eid in ranked if eid in found]
