"""The graphs a user may read or write, and whether this server's embedder matches a graph's vectors."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from exograph.accounts.models import User
from exograph.core.errors import Conflict, NotFound, PermissionDenied
from exograph.core.scope import Scope
from exograph.graphs.embeddings import get_embedder
from exograph.graphs.models import WORLD_GRAPH_ID, Graph


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


def graphs_holding_knowledge_for_user(*, user: User, besides: str, limit: int = 5) -> list[Graph]:
    """The user's own graphs that hold entities, most first, other than `besides`: where the explorer points
    when the graph it opened (the World Graph, by default) is still empty."""
    found = Graph.objects.filter(owner=user, entity_count__gt=0).exclude(id=besides)
    return list(found.order_by("-entity_count", "-created")[:limit])
