"""Graph CRUD: create, rename, delete, the default graphs, the stores behind them and their counts."""

from __future__ import annotations

import logging
import unicodedata

import redis
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest

from exograph.accounts.models import User
from exograph.core.errors import (
    Conflict,
    ExoGraphError,
    PermissionDenied,
    ValidationError,
)
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.embeddings import get_embedder
from exograph.graphs.models import WORLD_GRAPH_ID, Graph, GraphKind
from exograph.graphs.selectors import embedder_check, graph_get_for_user
from exograph.graphs.services.placement import graph_placement
from exograph.graphs.types import (
    GraphCounts,
)

logger = logging.getLogger(__name__)


MAX_GRAPH_NAME = 200
DEFAULT_GRAPH_NAMES = {
    (Scope.PRIVATE, GraphKind.DOCUMENT): "My documents",
    (Scope.WORLD, GraphKind.DOCUMENT): "My world documents",
    (Scope.PRIVATE, GraphKind.RESEARCH): "My research",
    (Scope.WORLD, GraphKind.RESEARCH): "My world research",
    (Scope.PRIVATE, GraphKind.MANUAL): "My graph",
    (Scope.WORLD, GraphKind.MANUAL): "My world graph",
}


def _clean_name(name: str) -> str:
    cleaned = " ".join((name or "").replace("\x00", "").split())
    if not cleaned:
        raise ValidationError("The graph name is empty.", code="invalid_name", hint="Give the graph a name.")
    if len(cleaned) > MAX_GRAPH_NAME:
        raise ValidationError(
            f"The graph name is longer than {MAX_GRAPH_NAME} characters.",
            code="invalid_name",
            hint=f"Use at most {MAX_GRAPH_NAME} characters.",
        )
    if any(unicodedata.category(ch) == "Cc" for ch in cleaned):
        raise ValidationError("The graph name contains control characters.", code="invalid_name")
    return cleaned


def graph_store_ensure(*, graph: Graph) -> None:
    """Create the graph's FalkorDB store and indexes if missing; records the embedder on first use."""
    embedder = embedder_check(graph=graph)
    if not graph.embedding_model:
        graph.embedding_model, graph.embedding_dim = embedder.name, embedder.dimension
        if graph.pk and Graph.objects.filter(pk=graph.pk).exists():
            Graph.objects.filter(pk=graph.pk, embedding_model="").update(
                embedding_model=embedder.name, embedding_dim=embedder.dimension
            )
    store.store_ensure(graph.store_name, dimension=int(graph.embedding_dim or embedder.dimension))


def graph_stores_ensure_all() -> tuple[int, list[str]]:
    """Bring every graph's store up to the current indexes (e.g. the CJK `terms` field and its
    backfill, store/cjk.py); run at start-up. Returns (graphs ensured, ids of those that failed:
    a store with another embedder or an unreachable one is reported, never fatal)."""
    done, failed = 0, []
    for graph in Graph.objects.order_by("created"):
        try:
            graph_store_ensure(graph=graph)
        except (ExoGraphError, redis.RedisError) as exc:
            logger.warning("graph %s store not ensured: %s", graph.id, type(exc).__name__)
            failed.append(graph.id)
        else:
            done += 1
    return done, failed


def world_graph() -> Graph:
    return Graph.objects.get(id=WORLD_GRAPH_ID)


def graph_create(*, actor: User, name: str, scope: Scope, kind: GraphKind = GraphKind.MANUAL) -> Graph:
    """Create an empty graph owned by actor, with its FalkorDB store. Raises Conflict, ValidationError, 503."""
    cleaned = _clean_name(name)
    if kind == GraphKind.WORLD:
        raise ValidationError("Only the platform has a graph of type world.", code="invalid_kind")
    if Graph.objects.filter(owner=actor, name=cleaned).exists():
        raise Conflict(
            f"You already have a graph named {cleaned!r}.", code="graph_name_taken", hint="Choose another name."
        )
    graph = Graph(owner=actor, name=cleaned, scope=Scope(scope), kind=kind, store_server=graph_placement())
    graph_store_ensure(graph=graph)  # before the row: a store that is down leaves nothing behind
    try:
        with transaction.atomic():
            graph.save(force_insert=True)
    except IntegrityError as exc:
        store.store_drop(graph.store_name)
        raise Conflict(
            f"You already have a graph named {cleaned!r}.", code="graph_name_taken", hint="Choose another name."
        ) from exc
    logger.info("graph %s created by user %s", graph.id, actor.id)
    return graph


def graph_writable(*, actor: User, graph_id: str) -> Graph:
    return graph_get_for_user(user=actor, graph_id=graph_id, write=True)


def graph_rename(*, actor: User, graph_id: str, name: str) -> Graph:
    """Rename one of actor's graphs. Raises NotFound, PermissionDenied, Conflict, ValidationError."""
    graph = graph_writable(actor=actor, graph_id=graph_id)
    cleaned = _clean_name(name)
    if Graph.objects.filter(owner=actor, name=cleaned).exclude(pk=graph.pk).exists():
        raise Conflict(
            f"You already have a graph named {cleaned!r}.", code="graph_name_taken", hint="Choose another name."
        )
    graph.name = cleaned
    graph.save(update_fields=["name", "modified"])
    return graph


def graph_delete(*, actor: User, graph_id: str) -> None:
    """Delete one of actor's graphs: its world-graph contributions, the row, then its store (after commit)."""
    graph = graph_writable(actor=actor, graph_id=graph_id)
    if graph.is_world:
        raise PermissionDenied("The World Graph cannot be deleted.", code="world_graph_protected")
    if graph.scope == Scope.WORLD:
        world = world_graph()
        # Un-merge first: if the store is down this raises 503 and nothing is deleted.
        for document_id in store.store_document_ids(graph.store_name):
            graph_counts_apply(
                graph=world, delta=store.store_document_remove(world.store_name, document_id=document_id)
            )
    store_name = graph.store_name
    with transaction.atomic():
        graph.delete()
        transaction.on_commit(lambda: _drop_quietly(store_name))
    logger.info("graph %s deleted by user %s", graph_id, actor.id)


def _drop_quietly(store_name: str) -> None:
    try:
        store.store_drop(store_name)
    except Exception:  # the row is gone; an orphan store is harmless and logged
        logger.exception("could not drop graph store %s", store_name)


def graph_default_for_user(*, actor: User, scope: Scope, kind: GraphKind = GraphKind.DOCUMENT) -> Graph:
    """actor's default graph of this scope and kind, created on first use (race-safe)."""
    scope = Scope(scope)
    existing = Graph.objects.filter(owner=actor, scope=scope, kind=kind, is_default=True).first()
    if existing is not None:
        return existing
    base = DEFAULT_GRAPH_NAMES.get((scope, GraphKind(kind)), f"My {kind} graph")
    embedder = get_embedder()
    for attempt in range(1, 20):
        name = base if attempt == 1 else f"{base} {attempt}"
        graph = Graph(
            owner=actor,
            name=name,
            scope=scope,
            kind=kind,
            is_default=True,
            embedding_model=embedder.name,
            embedding_dim=embedder.dimension,
            store_server=graph_placement(),
        )
        try:
            with transaction.atomic():
                graph.save(force_insert=True)
        except IntegrityError:
            # Another request made the default first, or the name is taken by another graph.
            existing = Graph.objects.filter(owner=actor, scope=scope, kind=kind, is_default=True).first()
            if existing is not None:
                return existing
            continue
        graph_store_ensure(graph=graph)
        return graph
    raise Conflict("Could not pick a name for your default graph.", code="graph_name_taken")


def graph_counts_refresh(*, graph: Graph) -> None:
    """Copy the store's entity/relation/document counts onto the row (a full scan: repairs only;
    writes keep the counts with graph_counts_apply)."""
    counts = store.store_counts(graph.store_name)
    graph.entity_count = counts["entities"]
    graph.relation_count = counts["relations"]
    graph.document_count = counts["documents"]
    Graph.objects.filter(pk=graph.pk).update(
        entity_count=graph.entity_count, relation_count=graph.relation_count, document_count=graph.document_count
    )


def graph_counts_apply(*, graph: Graph, delta: GraphCounts | None) -> None:
    """Add a write's change of the entity/relation/document counts to the row (atomic F updates)."""
    if not delta or not any(delta.values()):
        return
    Graph.objects.filter(pk=graph.pk).update(
        entity_count=Greatest(F("entity_count") + delta["entities"], 0),
        relation_count=Greatest(F("relation_count") + delta["relations"], 0),
        document_count=Greatest(F("document_count") + delta["documents"], 0),
    )
    counts = Graph.objects.filter(pk=graph.pk).values("entity_count", "relation_count", "document_count").first()
    if counts is not None:
        graph.entity_count = counts["entity_count"]
        graph.relation_count = counts["relation_count"]
        graph.document_count = counts["document_count"]
