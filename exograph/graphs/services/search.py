"""Metered reads: entity search and the World Graph entity lookup (they record the knowledge of others they used)."""

from __future__ import annotations

from billing.models import UsageSource
from billing.services import earnings_record
from exograph.accounts.models import User
from exograph.core.scope import Scope
from exograph.graphs.retrieval import entity_search
from exograph.graphs.selectors import world_entity_read
from exograph.graphs.types import (
    EntityHit,
    WorldEntityView,
)


def entities_search(
    *, actor: User, query: str, n_results: int = 10, graph_id: str | None = None, scope: Scope
) -> list[EntityHit]:
    """Hybrid entity search (graphs.retrieval.entity_search) for actor; records the world knowledge of other
    accounts it returned with billing (which pays them after commit). Raises as entity_search."""
    found = entity_search(user=actor, query=query, n_results=n_results, graph_id=graph_id, scope=scope)
    earnings_record(
        querier=actor, query=query.strip(), contributor_ids=found["contributor_ids"], source=UsageSource.SEARCH
    )
    return found["hits"]


def world_entity_lookup(*, actor: User, entity: str, evidence: bool = False, limit: int = 25) -> WorldEntityView:
    """A World Graph entity and its relations (selectors.world_entity_read) for actor; records the
    contributors' knowledge it returned with billing. Raises as world_entity_read."""
    found = world_entity_read(user=actor, entity=entity, evidence=evidence, limit=limit)
    earnings_record(
        querier=actor,
        query=entity.strip(),
        contributor_ids=found["contributor_ids"],
        source=UsageSource.WORLD_ENTITY,
    )
    return found["view"]
