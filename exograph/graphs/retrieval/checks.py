"""Input checks of the Retrieve flow (top_k, hops, budget, mode, readable graphs) and the origin of a graph's evidence."""

from __future__ import annotations

from collections.abc import Sequence

from exograph.accounts.models import User
from exograph.core.errors import NotFound, ValidationError
from exograph.core.scope import Scope
from exograph.graphs.models import Graph
from exograph.graphs.retrieval.types import (
    MODES,
    Mode,
    Origin,
)

# --- input checks ------------------------------------------------------------------------------


def check_int(value: int, *, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValidationError(
            f"{name} must be between {low} and {high}; got {value!r}.",
            code=f"invalid_{name}",
            hint=f"Send {name} from {low} to {high}.",
        )
    return value


def check_mode(mode: str) -> Mode:
    if mode not in MODES:
        raise ValidationError(
            f"mode must be one of {', '.join(MODES)}; got {str(mode)[:40]!r}.",
            code="invalid_mode",
            hint="Send mode passages, hybrid or graph.",
        )
    return mode  # type: ignore[return-value]


def check_graphs(*, actor: User, graphs: Sequence[Graph]) -> list[Graph]:
    """Only graphs the actor may read (own, world-scope, the World Graph); a foreign private one is NotFound."""
    checked: list[Graph] = []
    for graph in graphs:
        if graph.owner_id != actor.pk and graph.scope != Scope.WORLD:
            raise NotFound(
                f"No graph with id {str(graph.id)[:80]!r}.",
                code="graph_not_found",
                hint="List your graphs with GET /api/v1/graphs/ (or the list_graphs tool).",
            )
        if graph.id not in {g.id for g in checked}:
            checked.append(graph)
    return checked


def origin_of(*, actor: User, graph: Graph) -> Origin:
    """ "world" for the World Graph and every world-scope graph, the actor's own included (what a user shares is
    world evidence, whoever asks); "private" only for the actor's private graphs."""
    return "private" if graph.owner_id == actor.pk and graph.scope == Scope.PRIVATE and not graph.is_world else "world"
