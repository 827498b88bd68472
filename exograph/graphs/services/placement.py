"""Where a graph's store lives when there is more than one FalkorDB primary (FALKORDB_PRIMARIES).

The rule, applied by graph_create and graph_default_for_user before the store is made (graph_placement):

- the World Graph lives on FALKORDB_WORLD_PRIMARY (its own primary, with its own replicas);
- any other graph goes to the primary with the fewest entities placed on it (the sum of `entity_count` over the
  graphs whose `store_server` names it), ties broken by fewer graphs, then by the order of FALKORDB_PRIMARIES
  (`default` first); the World Graph's primary takes no other graph while another primary exists.

Entity count is what drives a primary's memory and query cost (docs/scaling.md); counts are refreshed after every
write, so the rule follows growth without asking FalkorDB. A graph stays where it was placed until an operator
moves it (`manage.py graph_move`). With one primary (the embedded default) nothing here runs.
"""

from __future__ import annotations

import logging
import time
from typing import Any, TypedDict

from django.conf import settings
from django.db.models import Count, Q, Sum

from exograph.core.errors import Conflict, NotFound, ValidationError
from exograph.core.falkor import (
    DEFAULT,
    StoreKey,
    falkordb_client,
    falkordb_primaries,
    placement_enabled,
    server_of_key,
)
from exograph.graphs import store
from exograph.graphs.models import WORLD_GRAPH_ID, Graph

logger = logging.getLogger(__name__)

# How long the source refuses writes to a moved graph (stale placements in running processes retry meanwhile).
MARKER_SECONDS = 3600


def placement_load() -> dict[str, tuple[int, int]]:
    """Each configured primary's (entities, graphs) placed on it; the World Graph counts on its primary."""
    names = list(falkordb_primaries())
    load = {name: (0, 0) for name in names}
    rows = (
        Graph.objects.exclude(id=WORLD_GRAPH_ID)
        .values("store_server")
        .annotate(entities=Sum("entity_count"), graphs=Count("id"))
    )
    for row in rows:
        name = row["store_server"] or DEFAULT
        if name in load:
            entities, graphs = load[name]
            load[name] = (entities + int(row["entities"] or 0), graphs + int(row["graphs"]))
    world = Graph.objects.filter(Q(id=WORLD_GRAPH_ID)).values_list("entity_count", flat=True).first()
    world_server = settings.FALKORDB_WORLD_PRIMARY
    if world_server in load:
        entities, graphs = load[world_server]
        load[world_server] = (entities + int(world or 0), graphs + 1)
    return load


def graph_placement() -> str:
    """The store_server of a graph about to be created: "" (the default server) unless there are several primaries."""
    return placement_choose() if placement_enabled() else ""


def placement_choose(*, world: bool = False) -> str:
    """The primary a new graph goes to (the rule in this module's docstring)."""
    if world:
        return settings.FALKORDB_WORLD_PRIMARY
    names = list(falkordb_primaries())
    candidates = [n for n in names if n != settings.FALKORDB_WORLD_PRIMARY] or names
    load = placement_load()
    return min(candidates, key=lambda name: (load[name][0], load[name][1], names.index(name)))


# --- moving a graph between primaries (manage.py graph_move) -------------------------------------


class MoveReport(TypedDict):
    graph_id: str
    source: str
    target: str
    nodes: int
    relations: int
    bytes: int


def _fingerprint(key: str, server: str) -> dict[str, Any]:
    """What must match on both sides of a copy: nodes per label, relations per type, the indexes."""
    store_key = StoreKey(key, server)
    nodes = sorted(
        (str(a), int(b)) for a, b in store.ro_query_primary(store_key, "MATCH (n) RETURN labels(n)[0], count(n)")
    )
    relations = sorted(
        (str(a), int(b)) for a, b in store.ro_query_primary(store_key, "MATCH ()-[r]->() RETURN type(r), count(r)")
    )
    indexes = sorted(
        (str(label), sorted(map(str, props or [])))
        for label, props in store.ro_query_primary(
            store_key, "CALL db.indexes() YIELD label, properties RETURN label, properties"
        )
    )
    return {"nodes": nodes, "relations": relations, "indexes": indexes}


def graph_store_server(graph: Graph) -> str:
    """The primary a graph's store is on now."""
    return server_of_key(graph.store_name)


def graph_store_move(
    *, graph_id: str, target: str, grace_seconds: float | None = None, keep_seconds: float = 10.0, replace: bool = False
) -> MoveReport:
    """Move a graph's store to another primary: refuse its writes (StoreMoving, a 503), wait out the writes already
    under way, copy the key (DUMP/RESTORE keeps nodes, relations, properties and every index), check that nodes per
    label, relations per type and indexes match on both sides and that the source did not change meanwhile,
    switch the Graph row, then drop the source's copy after keep_seconds (requests that loaded the row before the
    switch still read it). Writers that still hold the old placement keep getting the 503 (their tasks retry and
    read the new placement). Raises NotFound, ValidationError, Conflict; on any failure the graph stays where it was,
    writable again."""
    graph = Graph.objects.filter(id=graph_id).first()
    if graph is None:
        raise NotFound("No such graph.", code="graph_not_found")
    primaries = falkordb_primaries()
    if target not in primaries:
        raise ValidationError(
            f"No graph-store server named {target!r}; configured: {', '.join(primaries)}.", code="unknown_server"
        )
    source = graph_store_server(graph)
    if source == target:
        raise Conflict(f"Graph {graph_id} is already on {target!r}.", code="already_there")
    key = str(graph.store_name)
    src = falkordb_client(source).connection
    dst = falkordb_client(target).connection
    if dst.exists(key) and not replace:
        raise Conflict(f"{target!r} already holds a key {key!r}; pass replace to overwrite it.", code="target_busy")
    marker = store.moving_marker(key)
    grace = settings.FALKORDB_QUERY_TIMEOUT_MS / 1000 + 1 if grace_seconds is None else grace_seconds
    src.set(marker, f"moving:{target}", ex=MARKER_SECONDS)
    restored = False
    try:
        # A write that passed its check just before the marker was set finishes within the query timeout.
        time.sleep(grace)
        before = _fingerprint(key, source)
        payload = src.dump(key)
        if payload is not None:
            dst.restore(key, 0, payload, replace=replace)
            restored = True
        copied, after = _fingerprint(key, target), _fingerprint(key, source)
        if not (before == after == copied):
            raise Conflict(
                "The copy does not match its source (or the source changed during the copy); nothing was switched.",
                code="move_mismatch",
                extra={"source": after, "target": copied},
            )
        Graph.objects.filter(id=graph_id).update(store_server=target)
        src.set(marker, f"moved:{target}", ex=MARKER_SECONDS)
    except BaseException:
        if restored:
            dst.delete(key)
        src.delete(marker)
        raise
    logger.info("graph %s moved from %s to %s", graph_id, source, target)
    time.sleep(keep_seconds)
    src.delete(key)
    return MoveReport(
        graph_id=graph_id,
        source=source,
        target=target,
        nodes=sum(n for _, n in copied["nodes"]),
        relations=sum(n for _, n in copied["relations"]),
        bytes=len(payload or b""),
    )
