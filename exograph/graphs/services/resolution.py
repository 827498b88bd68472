"""One node per thing across documents: an incoming entity takes the type of the node its name already has.

An entity's graph id is its normalised name and its type (graphs.types.entity_id_for), so "Lucca" typed
LOCATION by one document and CONCEPT by another would be two nodes. Before a document is written, the names it
brings are looked up in the graph (by normalised name, the indexed key; nodes only this same document supports
are not counted, so a re-extraction may retype its own nodes) and:

  * a name the graph holds under a specific type (not CONCEPT) is written under that type, the best supported
    one if there are several (most documents, then the type name), whatever this document called it: the first
    typed reading wins and later documents join its node;
  * a name the graph holds only as CONCEPT, or not at all, keeps this document's type: a specific type beside a
    CONCEPT node makes a second, typed node, which the CONCEPT's own documents join when they are re-extracted
    (manage.py graph_reextract); graph_merges lists such names for review.

The document's own surface forms stay as the node's aliases (per document: provenance), so what each document
wrote is kept. Within a document, extraction.resolve merges case, plural, possessive and acronym variants first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from exograph.graphs import store
from exograph.graphs.types import EntityIn, MentionIn, RelationIn, normalize_name, normalize_type

CONCEPT = "concept"


def graph_types_known(store_name: str, *, keys: Sequence[str], document_id: str) -> dict[str, str]:
    """Normalised name -> the type its node has in the graph (the best supported specific type), for the keys
    some node other than one this document alone supports carries; CONCEPT-only names map to concept."""
    if not keys:
        return {}
    rows = store.ro_query_primary(
        store_name,
        "UNWIND $keys AS key MATCH (e:Entity {normalized_name: key}) "
        "WHERE NOT (size(e.document_ids) = 1 AND $doc IN e.document_ids) "
        "RETURN key, e.type, size(e.document_ids)",
        {"keys": sorted(set(keys)), "doc": document_id},
    )
    best: dict[str, tuple[bool, int, str]] = {}
    for key, kind, support in rows:
        kind = normalize_type(str(kind or CONCEPT))
        rank = (kind != CONCEPT, int(support or 0), kind)
        if key not in best or rank > best[key]:
            best[key] = rank
    return {key: rank[2] for key, rank in best.items()}


def types_resolve(
    store_name: str,
    *,
    document_id: str,
    entities: Sequence[EntityIn],
    mentions: Sequence[MentionIn],
    relations: Sequence[RelationIn],
) -> tuple[list[EntityIn], list[MentionIn], list[RelationIn]]:
    """The document's entities, mentions and relations with each name's type resolved against the graph
    (module docstring)."""
    names = [e.name for e in entities] + [m.entity_name for m in mentions]
    names += [n for r in relations for n in (r.source_name, r.target_name)]
    known = graph_types_known(
        store_name, keys=[k for k in {normalize_name(n) for n in names} if k], document_id=document_id
    )

    def kind(name: str, given: str) -> str:
        found = known.get(normalize_name(name))
        if found is None or found == normalize_type(given):
            return given
        if found == CONCEPT:
            return given  # a specific reading beside a CONCEPT node stays typed (module docstring)
        return found.upper()

    return (
        [replace(e, type=kind(e.name, e.type)) for e in entities],
        [replace(m, entity_type=kind(m.entity_name, m.entity_type)) for m in mentions],
        [
            replace(r, source_type=kind(r.source_name, r.source_type), target_type=kind(r.target_name, r.target_type))
            for r in relations
        ],
    )
