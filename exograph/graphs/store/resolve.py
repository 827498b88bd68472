"""Entity resolution for a write that names entities by text (graphs.services.imports): many names at once.

The rule of reads.store_entity_find, batched (a few reads whatever the number of names, each an index scan): the
entity with the stable id of the name and type, else the best-supported entity with that normalised name, else one
with it among its alias keys (reads.ALIAS_FIND's array index). Read from the primary: the write that follows
depends on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from exograph.graphs.store.core import ro_query_primary

BATCH = 2000
_BY_ID = "UNWIND $ids AS i MATCH (e:Entity {id: i}) RETURN e.id"
_BY_NAME = "UNWIND $keys AS k MATCH (e:Entity {normalized_name: k}) RETURN k, e.id ORDER BY size(e.document_ids) DESC"
_BY_ALIAS = (
    "UNWIND $keys AS k MATCH (e:Entity) WHERE k IN e.alias_keys RETURN k, e.id ORDER BY size(e.document_ids) DESC"
)
_ENTITIES = "UNWIND $ids AS i MATCH (e:Entity {id: i}) RETURN e.id, e.name, e.type"


def store_entities_resolve(store_name: str, wanted: Sequence[tuple[str, str]]) -> list[dict[str, Any] | None]:
    """For each (entity id, normalised name) of `wanted`, in order, the entity the graph holds for it ({id, name,
    type}), else None."""
    chosen: list[str | None] = []
    for start in range(0, len(wanted), BATCH):
        part = wanted[start : start + BATCH]
        held = {r[0] for r in ro_query_primary(store_name, _BY_ID, {"ids": sorted({eid for eid, _ in part})})}
        keys = sorted({key for eid, key in part if eid not in held})
        by_key: dict[str, str] = {}
        if keys:
            for key, eid in ro_query_primary(store_name, _BY_NAME, {"keys": keys}):
                by_key.setdefault(key, eid)
            rest = [key for key in keys if key not in by_key]
            if rest:
                for key, eid in ro_query_primary(store_name, _BY_ALIAS, {"keys": rest}):
                    by_key.setdefault(key, eid)
        chosen += [eid if eid in held else by_key.get(key) for eid, key in part]
    ids = sorted({eid for eid in chosen if eid})
    entities: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), BATCH):
        for eid, name, kind in ro_query_primary(store_name, _ENTITIES, {"ids": ids[start : start + BATCH]}):
            entities[eid] = {"id": eid, "name": name or "", "type": kind or ""}
    return [entities.get(eid) if eid else None for eid in chosen]
