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

A leading article (the/a/an, any case) never separates two nodes: before its type is resolved, a name whose
article variant ("the Harbour Board" / "Harbour Board" / "A Harbour Board") is a node of the graph, and whose own
key is not, is written under that node's name (the best supported one: a specific type, most documents, then
the name), its own form kept as an alias of this document. Names the graph does not hold yet come without an
article already (extraction.resolve drops it from the display name, but in a work's title: "The Godfather"), so
the World Graph, which receives the same resolved names, joins them too.

The document's own surface forms stay as the node's aliases (per document: provenance), so what each document
wrote is kept. Within a document, extraction.resolve merges case, plural, possessive, article and acronym variants
first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from exograph.graphs import store
from exograph.graphs.types import EntityIn, MentionIn, RelationIn, normalize_name, normalize_type

CONCEPT = "concept"
_ARTICLE = re.compile(r"^(?:the|a|an) ")
_Rank = tuple[bool, int, str]  # (a specific type, documents, the type or the name): the best supported node


def article_variants(key: str) -> list[str]:
    """The normalised keys a leading article alone tells apart from `key`: its bare form and the/a/an before it."""
    bare = _ARTICLE.sub("", key) or key
    return [bare, f"the {bare}", f"a {bare}", f"an {bare}"]


def _graph_nodes(store_name: str, *, keys: Sequence[str], document_id: str) -> list[tuple[str, str, str, int]]:
    """(normalised name, name, type, documents) of the nodes the graph holds under the keys, but nodes only this
    same document supports (a re-extraction may rename or retype its own nodes)."""
    if not keys:
        return []
    rows = store.ro_query_primary(
        store_name,
        "UNWIND $keys AS key MATCH (e:Entity {normalized_name: key}) "
        "WHERE NOT (size(e.document_ids) = 1 AND $doc IN e.document_ids) "
        "RETURN key, e.name, e.type, size(e.document_ids)",
        {"keys": sorted(set(keys)), "doc": document_id},
    )
    return [(str(k), str(n), normalize_type(str(t or CONCEPT)), int(s or 0)) for k, n, t, s in rows]


def _names_by_article(keys: Sequence[str], nodes: Sequence[tuple[str, str, str, int]]) -> dict[str, str]:
    """Normalised name -> the name of the best supported node held under one of its article variants, for the keys
    the graph does not hold themselves (module docstring)."""
    held: dict[str, _Rank] = {}
    for key, name, kind, support in nodes:
        rank = (kind != CONCEPT, support, name)
        if key not in held or rank > held[key]:
            held[key] = rank
    found: dict[str, str] = {}
    for key in set(keys):
        if key in held:
            continue  # the name's own node: nothing to join
        if ranks := [held[v] for v in article_variants(key) if v in held]:
            found[key] = max(ranks)[2]
    return found


def _types_known(nodes: Sequence[tuple[str, str, str, int]]) -> dict[str, str]:
    """Normalised name -> the type its node has in the graph (the best supported specific type); CONCEPT-only
    names map to concept."""
    best: dict[str, _Rank] = {}
    for key, _name, kind, support in nodes:
        rank = (kind != CONCEPT, support, kind)
        if key not in best or rank > best[key]:
            best[key] = rank
    return {key: rank[2] for key, rank in best.items()}


def graph_types_known(store_name: str, *, keys: Sequence[str], document_id: str) -> dict[str, str]:
    """Normalised name -> the type its node has in the graph (the best supported specific type), for the keys
    some node other than one this document alone supports carries; CONCEPT-only names map to concept."""
    return _types_known(_graph_nodes(store_name, keys=keys, document_id=document_id))


def types_resolve(
    store_name: str,
    *,
    document_id: str,
    entities: Sequence[EntityIn],
    mentions: Sequence[MentionIn],
    relations: Sequence[RelationIn],
) -> tuple[list[EntityIn], list[MentionIn], list[RelationIn]]:
    """The document's entities, mentions and relations with each name joined to the node its article variant has
    and its type resolved against the graph (module docstring)."""
    names = [e.name for e in entities] + [m.entity_name for m in mentions]
    names += [n for r in relations for n in (r.source_name, r.target_name)]
    keys = [k for k in {normalize_name(n) for n in names} if k]
    nodes = _graph_nodes(
        store_name, keys=[v for k in keys for v in article_variants(k)], document_id=document_id
    )  # one query: each key's own node and its article variants' nodes
    if joined := _names_by_article(keys, nodes):

        def name_of(name: str) -> str:
            return joined.get(normalize_name(name), name)

        entities = [
            replace(e, name=name_of(e.name), aliases=tuple(dict.fromkeys([*e.aliases, e.name])))
            if name_of(e.name) != e.name
            else e
            for e in entities
        ]
        mentions = [replace(m, entity_name=name_of(m.entity_name)) for m in mentions]
        relations = [
            replace(r, source_name=name_of(r.source_name), target_name=name_of(r.target_name)) for r in relations
        ]
    known = _types_known(nodes)

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
