"""The merge report (read only): what entity resolution joined in a graph, for its owner to review.

Two lists:
  * merged: entities written under one node from several surface forms (case, plural, possessive, article,
    acronym, title qualifier: documents.extraction.resolve; types across documents: graphs.services.resolution),
    each with the forms every document wrote (the node's per-document aliases: the provenance of the merge);
  * split: names the graph still holds as several nodes (one per type: "Lucca" LOCATION and "Lucca" CONCEPT; or
    one written with a leading article before resolution dropped it: "The Harbour Board" beside "Harbour Board",
    grouped under the name without the article), which a re-extraction (manage.py graph_reextract) or the owner
    may join.
"""

from __future__ import annotations

from typing import Any

from exograph.accounts.models import User
from exograph.core.errors import PermissionDenied
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.selectors import graph_get_for_user
from exograph.graphs.selectors.search import _check_n_results

MAX_REPORT = 500
MAX_REPORT_OFFSET = 100_000
REPORT_LIMIT = 100


def graph_merges_report(*, graph: Graph, limit: int = REPORT_LIMIT, offset: int = 0) -> dict[str, Any]:
    """{"merged": [{id, name, type, forms, documents: [{document_id, forms}]}], "split": [{key, nodes: [{id,
    name, type, documents}]}], "more_merged": bool, "more_split": bool}, the most merged first; each list holds at
    most `limit` rows after skipping `offset` (more_*: rows follow). Raises ServiceUnavailable when the store is
    down."""
    limit = max(1, min(int(limit), MAX_REPORT))
    offset = max(0, min(int(offset), MAX_REPORT_OFFSET))
    rows = store.ro_query(
        graph.store_name,
        "MATCH (e:Entity) WHERE size(coalesce(e.aliases, [])) > 0 "
        "RETURN e.id, e.name, e.type, e.aliases, e.document_ids, e.doc_aliases "
        "ORDER BY size(e.aliases) DESC, e.id SKIP $offset LIMIT $limit",
        {"limit": limit + 1, "offset": offset},
    )
    more_merged = len(rows) > limit
    merged = []
    for eid, name, kind, aliases, document_ids, doc_aliases in rows[:limit]:
        per_document = [
            {"document_id": str(doc), "forms": [str(f) for f in (forms or [])]}
            for doc, forms in zip(document_ids or [], doc_aliases or [], strict=False)
        ]
        merged.append(
            {
                "id": eid,
                "name": name,
                "type": kind,
                "forms": [str(a) for a in aliases or []],
                "documents": per_document,
            }
        )
    rows = store.ro_query(
        graph.store_name,
        "MATCH (e:Entity) WITH e, e.normalized_name AS n "
        "WITH e, CASE WHEN n STARTS WITH 'the ' THEN substring(n, 4) WHEN n STARTS WITH 'an ' THEN substring(n, 3) "
        "WHEN n STARTS WITH 'a ' THEN substring(n, 2) ELSE n END AS key "
        "WITH key, collect([e.id, e.name, e.type, size(e.document_ids)]) "
        "AS nodes WHERE size(nodes) > 1 RETURN key, nodes ORDER BY size(nodes) DESC, key SKIP $offset LIMIT $limit",
        {"limit": limit + 1, "offset": offset},
    )
    more_split = len(rows) > limit
    split = [
        {
            "key": key,
            "nodes": [{"id": n[0], "name": n[1], "type": n[2], "documents": int(n[3] or 0)} for n in nodes],
        }
        for key, nodes in rows[:limit]
    ]
    return {"merged": merged, "split": split, "more_merged": more_merged, "more_split": more_split}


def graph_merges_for_owner(*, user: User, graph_id: str, limit: int = REPORT_LIMIT, offset: int = 0) -> dict[str, Any]:
    """The merge report of one of the user's own graphs (the REST endpoint's and the web page's read): the report
    with graph_id, graph_name, limit and offset. A graph the user cannot read is NotFound (as every graph read);
    a world-scope graph of another account, or the World Graph, is PermissionDenied: its merges join other
    accounts' documents. Raises ValidationError (limit or offset out of range), 503 (the store is down)."""
    limit = _check_n_results(limit, name="limit", maximum=MAX_REPORT)
    offset = _check_n_results(offset, name="offset", minimum=0, maximum=MAX_REPORT_OFFSET)
    graph = graph_get_for_user(user=user, graph_id=graph_id)
    if graph.owner_id != user.pk:
        raise PermissionDenied(
            f"Graph {graph.id} is shared by another account; only its owner reviews its merges.",
            code="graph_not_owned",
            hint="Open the merge report of one of your own graphs (GET /api/v1/graphs/ lists them).",
        )
    report = graph_merges_report(graph=graph, limit=limit, offset=offset)
    return {"graph_id": graph.id, "graph_name": graph.name, "limit": limit, "offset": offset, **report}
