"""Permission-scoped reads of graphs: lookups, listing, hybrid entity search, the world graph.

Pure reads. The ones that may return other accounts' world knowledge (world_entity_read, and
graphs.retrieval's retrieve and entity_search) also return those contributors' ids; the services the interfaces
call (graphs.services.entities_search, world_entity_lookup) hand them to billing.
"""

from __future__ import annotations

from typing import Any, TypedDict

from django.db.models import Q

from exograph.accounts.models import User
from exograph.core.errors import Conflict, NotFound, PermissionDenied, ValidationError
from exograph.core.scope import Scope
from exograph.core.snippets import snippet
from exograph.documents.selectors import document_view_url, documents_viewable
from exograph.graphs import store
from exograph.graphs.embeddings import get_embedder
from exograph.graphs.models import WORLD_GRAPH_ID, Graph
from exograph.graphs.types import RelatedEntity, WorldEntityView, normalize_name

MAX_QUERY_LENGTH = 1000
MAX_N_RESULTS = 100
MAX_RELATED = 100
RRF_K = 60
PASSAGE = 500
VECTOR_OVERFETCH = 20  # dormant vector nodes (see store.py) may take some of the k slots


class WorldEntityRead(TypedDict):
    view: WorldEntityView
    contributor_ids: list[int]


def embedder_check(*, graph: Graph) -> Any:
    """The current embedder, if it matches the one the graph's vectors were made with. Raises Conflict."""
    embedder = get_embedder()
    if graph.embedding_model and (
        graph.embedding_model != embedder.name or (graph.embedding_dim and graph.embedding_dim != embedder.dimension)
    ):
        raise Conflict(
            f"Graph {graph.id} holds vectors of {graph.embedding_model} ({graph.embedding_dim} dimensions) "
            f"but this server embeds with {embedder.name} ({embedder.dimension} dimensions).",
            code="embedding_model_mismatch",
            hint=f"Re-embed the graph with `python manage.py reembed_graph {graph.id}`, "
            "or configure the embedder the graph was built with.",
        )
    return embedder


def graph_get_for_user(*, user: User, graph_id: str, write: bool = False) -> Graph:
    """A graph the user may read (own, world-scope, the World Graph); write=True: only the owner's.

    Missing and foreign private graphs raise the same NotFound."""
    graph = Graph.objects.filter(id=str(graph_id)[:64]).select_related("owner").first()
    if graph is None or (graph.owner_id != user.pk and graph.scope != Scope.WORLD):
        raise NotFound(
            f"No graph with id {str(graph_id)[:80]!r}.",
            code="graph_not_found",
            hint="List your graphs with GET /api/v1/graphs/ (or the list_graphs tool).",
        )
    if write and graph.owner_id != user.pk:
        raise PermissionDenied(
            f"Graph {graph.id} is shared read-only; only its owner can change it.",
            code="graph_read_only",
            hint="Create your own graph to write to.",
        )
    return graph


def graph_list_for_user(*, user: User, scope: Scope | None) -> list[Graph]:
    """The user's graphs of a scope (world also lists the World Graph); None: all of them. Rows carry counts."""
    mine = Q(owner=user)
    if scope == Scope.PRIVATE:
        condition = mine & Q(scope=Scope.PRIVATE)
    elif scope == Scope.WORLD:
        condition = (mine & Q(scope=Scope.WORLD)) | Q(id=WORLD_GRAPH_ID)
    else:
        condition = mine | Q(id=WORLD_GRAPH_ID)
    return list(Graph.objects.filter(condition).order_by("-created"))


def _check_query(query: str) -> str:
    text = (query or "").replace("\x00", "").strip()
    if not text:
        raise ValidationError("The query is empty.", code="empty_query", hint="Send a non-blank query.")
    if len(text) > MAX_QUERY_LENGTH:
        raise ValidationError(
            f"The query is {len(text)} characters long; the maximum is {MAX_QUERY_LENGTH}.",
            code="query_too_long",
            hint=f"Shorten the query to at most {MAX_QUERY_LENGTH} characters.",
        )
    return text


def _check_n_results(n_results: int, *, name: str = "n_results", maximum: int = MAX_N_RESULTS) -> int:
    if isinstance(n_results, bool) or not isinstance(n_results, int) or not 1 <= n_results <= maximum:
        raise ValidationError(
            f"{name} must be between 1 and {maximum}; got {n_results!r}.",
            code=f"invalid_{name}",
            hint=f"Send {name} from 1 to {maximum}.",
        )
    return n_results


def search_graphs_for_user(*, user: User, scope: Scope, graph_id: str | None) -> list[Graph]:
    """The graphs a search reads: one readable graph, the user's private graphs, or the World Graph
    plus the user's own world-scope graphs (everyone else's world-scope knowledge is merged into the
    World Graph, so it is found there)."""
    if graph_id:
        return [graph_get_for_user(user=user, graph_id=graph_id)]
    if scope == Scope.WORLD:
        graphs = list(Graph.objects.filter(Q(id=WORLD_GRAPH_ID) | (Q(owner=user) & Q(scope=Scope.WORLD))))
        graphs.sort(key=lambda g: (not g.is_world, g.created))
        return graphs
    return list(Graph.objects.filter(owner=user, scope=Scope.PRIVATE).order_by("created"))


def _fuse(
    per_graph: dict[str, dict[str, list[tuple[str, float, str]]]],
) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], str], dict[tuple[str, str], bool]]:
    scores: dict[tuple[str, str], float] = {}
    passages: dict[tuple[str, str], str] = {}
    direct: dict[tuple[str, str], bool] = {}
    for graph_id, lists in per_graph.items():
        for list_name, hits in lists.items():
            seen: set[str] = set()
            rank = 0
            for entity_id, _score, passage in hits:
                if entity_id in seen:
                    continue
                seen.add(entity_id)
                rank += 1
                key = (graph_id, entity_id)
                scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
                if passage and key not in passages:
                    passages[key] = passage
                if list_name.startswith("entity_"):
                    direct[key] = True
    return scores, passages, direct


def world_entity_read(*, user: User, entity: str, evidence: bool = False, limit: int = 25) -> WorldEntityRead:
    """An entity of the World Graph (by id or by name, case- and accent-insensitive) with its related
    entities, strongest first, and the ids of the accounts who contributed them.

    Raises ValidationError, NotFound (with `suggestions`), 503."""
    text = (entity or "").replace("\x00", "").strip()
    if not text:
        raise ValidationError("entity_id is empty.", code="empty_entity", hint="Send an entity id or name.")
    if len(text) > 300:
        raise ValidationError(
            "entity_id is longer than 300 characters.", code="entity_too_long", hint="Send an entity id or name."
        )
    limit = _check_n_results(limit, name="limit", maximum=MAX_RELATED)
    world = Graph.objects.get(id=WORLD_GRAPH_ID)
    entity_id = store.store_entity_find(world.store_name, entity_id=text, key=normalize_name(text))
    if entity_id is None:
        suggestions = world_entity_suggestions(world=world, text=text)
        raise NotFound(
            f"No entity {text[:80]!r} in the World Graph.",
            code="entity_not_found",
            hint=("Did you mean: " + ", ".join(suggestions) + "?")
            if suggestions
            else "Search with GET /api/v1/entities/search?graph_scope=world.",
            extra={"suggestions": suggestions},
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


MAX_EXPLORE_HOPS = 3
MAX_EXPLORE_LIMIT = 50
EXPLORE_PASSAGES = 5


def graph_explore(*, user: User, graph_id: str, entity: str, hops: int = 1, limit: int = 25) -> dict[str, Any]:
    """A bounded neighbourhood of an entity for the explorer: nodes (with degree and "more"), typed edges with
    strength and provenance, and the centre's sources and passages. At most `limit` relations per node and
    `limit` nodes expanded per hop. Raises ValidationError, NotFound (foreign graph, or unknown entity with
    `suggestions`), 503."""
    text = (entity or "").replace("\x00", "").strip()
    if not text:
        raise ValidationError("entity is empty.", code="empty_entity", hint="Send an entity id or name.")
    if len(text) > 300:
        raise ValidationError(
            "entity is longer than 300 characters.", code="entity_too_long", hint="Send an id or name."
        )
    hops = _check_n_results(hops, name="hops", maximum=MAX_EXPLORE_HOPS)
    limit = _check_n_results(limit, name="limit", maximum=MAX_EXPLORE_LIMIT)
    graph = graph_get_for_user(user=user, graph_id=graph_id)
    name = graph.store_name
    center_id = store.store_entity_find(name, entity_id=text, key=normalize_name(text))
    if center_id is None:
        suggestions = world_entity_suggestions(world=graph, text=text)
        raise NotFound(
            f"No entity {text[:80]!r} in graph {graph.id}.",
            code="entity_not_found",
            hint=("Did you mean: " + ", ".join(suggestions) + "?")
            if suggestions
            else f"Search with GET /api/v1/entities/search?graph_id={graph.id}.",
            extra={"suggestions": suggestions},
        )
    depth: dict[str, int] = {center_id: 0}
    edges: dict[tuple[str, str, str], dict[str, Any]] = {}
    expanded: dict[str, int] = {}
    frontier = [center_id]
    for hop in range(1, hops + 1):
        following: list[str] = []
        for node_id in frontier[:limit]:
            rows = store.store_related(name, entity_id=node_id, limit=limit)
            expanded[node_id] = len(rows)
            for row in rows:
                source, target = (node_id, row["id"]) if row["direction"] == "outgoing" else (row["id"], node_id)
                key = (source, row["relationship"], target)
                if key not in edges:
                    edges[key] = {
                        "source": source,
                        "target": target,
                        "type": row["relationship"].lower(),
                        "strength": row["strength"],
                        "document_ids": row["document_ids"],
                        "chunk_ids": row["chunk_ids"][:3],
                    }
                if row["id"] not in depth:
                    depth[row["id"]] = hop
                    following.append(row["id"])
        frontier = following
    details = store.store_entities(name, list(depth))
    degrees = store.store_entity_degrees(name, list(depth))
    document_ids = sorted({doc for edge in edges.values() for doc in edge["document_ids"]})
    filenames = store.store_document_names(name, document_ids)
    viewable = documents_viewable(user=user, document_ids=document_ids)
    for edge in edges.values():
        edge["sources"] = [
            {
                "document_id": d,
                "filename": filenames.get(d, ""),
                "view_url": document_view_url(d) if d in viewable else None,
            }
            for d in edge.pop("document_ids")
        ]
    nodes = []
    for node_id, hop in depth.items():
        info = details.get(node_id, {"name": node_id, "type": "", "description": "", "mentions": 0})
        degree = degrees.get(node_id, 0)
        nodes.append(
            {
                "id": node_id,
                "name": info["name"],
                "type": info["type"],
                "description": info.get("description", ""),
                "mentions": info.get("mentions", 0),
                "degree": degree,
                "hop": hop,
                "expanded": node_id in expanded,
                "more": max(0, degree - expanded[node_id]) if node_id in expanded else degree,
            }
        )
    center_edges = [e for e in edges.values() if center_id in (e["source"], e["target"])]
    chunk_ids = list(dict.fromkeys(c for e in center_edges for c in e["chunk_ids"]))[:EXPLORE_PASSAGES]
    passages = store.store_passages(name, chunk_ids)
    viewable |= documents_viewable(user=user, document_ids={p["document_id"] for p in passages.values()} - viewable)
    center_name = details.get(center_id, {}).get("name", text)
    return {
        "graph_id": graph.id,
        "graph_name": graph.name,
        "entity": next(n for n in nodes if n["id"] == center_id),
        "hops": hops,
        "limit": limit,
        "nodes": nodes,
        "edges": list(edges.values()),
        "sources": [
            {"document_id": doc, "filename": filename, "view_url": view_url}
            for doc, filename, view_url in sorted(
                {(s["document_id"], s["filename"], s["view_url"]) for e in center_edges for s in e["sources"]},
                key=lambda s: s[1],
            )
        ],
        "passages": [
            {
                "chunk_id": cid,
                "document_id": passages[cid]["document_id"],
                "filename": passages[cid]["document"],
                "page": passages[cid]["page"],
                "text": snippet(passages[cid]["text"], center_name, limit=PASSAGE),
                "view_url": document_view_url(passages[cid]["document_id"], page=passages[cid]["page"], chunk_id=cid)
                if str(passages[cid]["document_id"]) in viewable
                else None,
            }
            for cid in chunk_ids
            if cid in passages
        ],
    }


OVERVIEW_LIMIT = 150  # entities drawn by the explorer's overview unless asked for more
MAX_OVERVIEW_LIMIT = 2000


def graph_overview(*, user: User, graph_id: str, limit: int = OVERVIEW_LIMIT, document_id: str = "") -> dict[str, Any]:
    """The explorer's overview: the `limit` most connected entities of a graph (of one of the user's documents in
    it, when `document_id` is given) and the relations among them; degrees count every relation in the graph.
    Raises ValidationError, NotFound (graph, or a document that is not the user's in this graph), 503."""
    from exograph.documents.selectors import document_get_for_user

    limit = _check_n_results(limit, name="limit", maximum=MAX_OVERVIEW_LIMIT)
    graph = graph_get_for_user(user=user, graph_id=graph_id)
    name = graph.store_name
    document = None
    if document_id:
        document = document_get_for_user(user=user, document_id=document_id)
        if document.graph_id != graph.id:
            raise NotFound(
                f"Document {str(document_id)[:80]!r} is not in graph {graph.id}.",
                code="document_not_found",
                hint="Pick one of this graph's documents (GET /api/v1/documents/).",
            )
        rows = store.ro_query(
            name,
            "MATCH (d:Document {id: $doc}) UNWIND d.entity_ids AS eid MATCH (e:Entity {id: eid}) "
            "OPTIONAL MATCH (e)-[r]-(o:Entity) WHERE o <> e "
            "WITH e, count(r) AS n ORDER BY n DESC, e.name ASC LIMIT $limit RETURN e.id, e.name, e.type, n",
            {"doc": str(document.id), "limit": limit},
        )
        total_rows = store.ro_query(
            name, "MATCH (d:Document {id: $doc}) RETURN size(d.entity_ids)", {"doc": str(document.id)}
        )
    else:
        rows = store.ro_query(
            name,
            "MATCH (e:Entity) OPTIONAL MATCH (e)-[r]-(o:Entity) WHERE o <> e "
            "WITH e, count(r) AS n ORDER BY n DESC, e.name ASC LIMIT $limit RETURN e.id, e.name, e.type, n",
            {"limit": limit},
        )
        total_rows = store.ro_query(name, "MATCH (e:Entity) RETURN count(e)")
    ids = [str(r[0]) for r in rows]
    # Each chosen entity's outgoing relations by its index, the far end kept here: FalkorDB's `b.id IN $ids`
    # per row took 10 s for 2,000 ids (a set lookup in Python, milliseconds).
    chosen = set(ids)
    links = [
        row
        for row in store.ro_query(
            name,
            "UNWIND $ids AS eid MATCH (a:Entity {id: eid})-[r]->(b:Entity) RETURN a.id, type(r), b.id, r.count",
            {"ids": ids},
        )
        if str(row[2]) in chosen and row[0] != row[2]
    ]
    return {
        "graph_id": graph.id,
        "graph_name": graph.name,
        "document_id": str(document.id) if document else None,
        "limit": limit,
        "total": int((total_rows[0][0] if total_rows else 0) or 0),
        "nodes": [
            {
                "id": str(r[0]),
                "name": str(r[1] or r[0]),
                "type": str(r[2] or ""),
                "description": "",
                "mentions": 0,
                "degree": int(r[3] or 0),
                "hop": 1,
                "expanded": False,
                "more": 0,
            }
            for r in rows
        ],
        "edges": [
            {
                "source": str(a),
                "target": str(b),
                "type": str(kind).lower(),
                "strength": int(count or 0),
                "chunk_ids": [],
                "sources": [],
            }
            for a, kind, b, count in links
        ],
    }


VIEWER_PART_CHUNKS = 20  # documents without page numbers (text, some DOCX) are shown in parts of this many chunks
VIEWER_ENTITIES = 200


def _viewer_page(page: Any, ordinal: Any) -> int:
    """A chunk's page in the viewer: its page number, or its part for documents without pages."""
    if isinstance(page, int) and page > 0:
        return page
    return int(ordinal or 0) // VIEWER_PART_CHUNKS + 1


def document_contents_read(*, graph: Graph, document_id: str, page: int | None, chunk_id: str) -> dict[str, Any]:
    """What a document wrote to its graph, for the document viewer: its pages (or parts, for documents without
    page numbers), the chunks of one page in reading order, and the entities it contributed. `chunk_id` picks
    the page when `page` is not given; a page out of range falls back to the first. Pure read; the caller checks
    the document is the user's. Raises ServiceUnavailable (graph store down)."""
    name = graph.store_name
    rows = store.ro_query(
        name,
        "MATCH (d:Document {id: $doc}) WITH d MATCH (d)-[:HAS_CHUNK]->(c:Chunk) RETURN c.id, c.page, c.ordinal",
        {"doc": document_id},
    )
    where = {str(r[0]): _viewer_page(r[1], r[2]) for r in rows}
    pages = sorted(set(where.values()))
    numbered = any(isinstance(r[1], int) and r[1] > 0 for r in rows)
    if page is None or page not in pages:
        page = where.get(chunk_id) or (pages[0] if pages else 1)
    wanted = [cid for cid, p in where.items() if p == page]
    chunks = store.store_chunks(name, wanted)
    ordinal = {str(r[0]): int(r[2] or 0) for r in rows}
    listed = store.ro_query(name, "MATCH (d:Document {id: $doc}) RETURN d.entity_ids", {"doc": document_id})
    entity_ids = [str(e) for e in ((listed[0][0] if listed else None) or [])]
    details = store.store_entities(name, entity_ids[:VIEWER_ENTITIES])
    entities = sorted(
        ({"id": eid, "name": str(e["name"] or eid), "type": str(e["type"] or "")} for eid, e in details.items()),
        key=lambda e: (e["type"], e["name"].casefold()),
    )
    return {
        "pages": pages,
        "numbered": numbered,
        "page": page,
        "chunks": [
            {"id": cid, "text": chunks[cid]["text"], "cited": cid == chunk_id}
            for cid in sorted(wanted, key=lambda c: ordinal[c])
            if cid in chunks
        ],
        "entities": entities,
        "entity_total": len(entity_ids),
    }
