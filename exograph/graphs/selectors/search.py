"""What a search reads and how it checks its input: the graphs in scope, the query, result counts, and the
reciprocal-rank fusion of search lists (graphs.retrieval builds on these)."""

from __future__ import annotations

from django.db.models import Q

from exograph.accounts.models import User
from exograph.core.errors import ValidationError
from exograph.core.scope import Scope
from exograph.graphs.models import WORLD_GRAPH_ID, Graph
from exograph.graphs.selectors.graphs import graph_get_for_user

MAX_QUERY_LENGTH = 1000
MAX_N_RESULTS = 100
RRF_K = 60
VECTOR_OVERFETCH = 20  # dormant vector nodes (see store.py) may take some of the k slots


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


def _check_n_results(n_results: int, *, name: str = "n_results", maximum: int = MAX_N_RESULTS, minimum: int = 1) -> int:
    """A whole number from minimum to maximum. Raises ValidationError (invalid_<name>) naming the range."""
    if isinstance(n_results, bool) or not isinstance(n_results, int) or not minimum <= n_results <= maximum:
        raise ValidationError(
            f"{name} must be between {minimum} and {maximum}; got {n_results!r}.",
            code=f"invalid_{name}",
            hint=f"Send {name} from {minimum} to {maximum}.",
        )
    return n_results


def _check_entity(entity: str, *, field: str) -> str:
    """An entity id or name as sent, NUL bytes dropped and stripped. Raises ValidationError naming `field`."""
    text = (entity or "").replace("\x00", "").strip()
    if not text:
        raise ValidationError(f"{field} is empty.", code="empty_entity", hint="Send an entity id or name.")
    if len(text) > 300:
        raise ValidationError(
            f"{field} is longer than 300 characters.", code="entity_too_long", hint="Send an entity id or name."
        )
    return text


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
