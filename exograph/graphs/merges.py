"""The merge report (read only): what entity resolution joined in a graph, for its owner to review.

Two lists:
  * merged: entities written under one node from several surface forms (case, plural, possessive, article,
    acronym, title qualifier: documents.extraction.resolve; types across documents: graphs.services.resolution),
    each with the forms every document wrote (the node's per-document aliases: the provenance of the merge);
  * split: names the graph still holds as several nodes (one per type: "Lucca" LOCATION and "Lucca" CONCEPT),
    which a re-extraction (manage.py graph_reextract) or the owner may join.
"""

from __future__ import annotations

from typing import Any

from exograph.graphs import store
from exograph.graphs.models import Graph

MAX_REPORT = 500


def graph_merges_report(*, graph: Graph, limit: int = 100) -> dict[str, Any]:
    """{"merged": [{id, name, type, forms, documents: [{document_id, forms}]}], "split": [{key, nodes: [{id,
    name, type, documents}]}]}, the most merged first. Raises ServiceUnavailable when the store is down."""
    limit = max(1, min(int(limit), MAX_REPORT))
    rows = store.ro_query(
        graph.store_name,
        "MATCH (e:Entity) WHERE size(coalesce(e.aliases, [])) > 0 "
        "RETURN e.id, e.name, e.type, e.aliases, e.document_ids, e.doc_aliases "
        "ORDER BY size(e.aliases) DESC, e.id LIMIT $limit",
        {"limit": limit},
    )
    merged = []
    for eid, name, kind, aliases, document_ids, doc_aliases in rows:
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
        "MATCH (e:Entity) WITH e.normalized_name AS key, collect([e.id, e.name, e.type, size(e.document_ids)]) "
        "AS nodes WHERE size(nodes) > 1 RETURN key, nodes ORDER BY size(nodes) DESC, key LIMIT $limit",
        {"limit": limit},
    )
    split = [
        {
            "key": key,
            "nodes": [{"id": n[0], "name": n[1], "type": n[2], "documents": int(n[3] or 0)} for n in nodes],
        }
        for key, nodes in rows
    ]
    return {"merged": merged, "split": split}
