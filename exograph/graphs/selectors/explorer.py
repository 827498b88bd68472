"""The graph explorer's reads: an entity's bounded neighbourhood and a graph's overview."""

from __future__ import annotations

from typing import Any

from exograph.accounts.models import User
from exograph.core.errors import NotFound
from exograph.core.snippets import snippet
from exograph.documents.selectors import document_view_url, documents_viewable
from exograph.graphs import store
from exograph.graphs.selectors.graphs import graph_get_for_user
from exograph.graphs.selectors.search import _check_entity, _check_n_results
from exograph.graphs.selectors.world import PASSAGE, entity_not_found
from exograph.graphs.types import normalize_name

MAX_EXPLORE_HOPS = 3
MAX_EXPLORE_LIMIT = 50
EXPLORE_PASSAGES = 5


def graph_explore(*, user: User, graph_id: str, entity: str, hops: int = 1, limit: int = 25) -> dict[str, Any]:
    """A bounded neighbourhood of an entity for the explorer: nodes (with degree and "more"), typed edges with
    strength and provenance, and the centre's sources and passages. At most `limit` relations per node and
    `limit` nodes expanded per hop. Raises ValidationError, NotFound (foreign graph, or unknown entity with
    `suggestions`), 503."""
    text = _check_entity(entity, field="entity")
    hops = _check_n_results(hops, name="hops", maximum=MAX_EXPLORE_HOPS)
    limit = _check_n_results(limit, name="limit", maximum=MAX_EXPLORE_LIMIT)
    graph = graph_get_for_user(user=user, graph_id=graph_id)
    name = graph.store_name
    center_id = store.store_entity_find(name, entity_id=text, key=normalize_name(text))
    if center_id is None:
        raise entity_not_found(
            graph=graph, text=text, where=f"graph {graph.id}", search=f"GET /api/v1/entities/search?graph_id={graph.id}"
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
