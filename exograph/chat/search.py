"""Retrieval without an answer: the evidence chat's engines would hand the model, for clients that write their
own answers (exograph-client's ExoGraphRetriever in neo4j-graphrag, scripts).

Free like entity search (it counts against the request limits); world knowledge of other accounts in the items
is recorded with billing, which pays its contributors, as chat and search do.
"""

from __future__ import annotations

from typing import Any

from billing.models import UsageSource
from billing.services import earnings_record
from exograph.accounts.models import User
from exograph.chat.evidence import evidence_retrieve
from exograph.core.errors import ValidationError
from exograph.core.scope import Scope

SEARCH_ENGINES = ("rag", "graph")
MAX_ITEMS = 30


def evidence_search(
    *, actor: User, question: str, engine: str, scope: Scope, graph_id: str | None = None, limit: int = 12
) -> list[dict[str, Any]]:
    """The evidence for question (engine rag: passages; graph: facts, relations, passages and entities), best
    first, numbered n = 1.. . Raises ValidationError (engine, empty question), NotFound (graph_id not readable),
    ServiceUnavailable (graph store down)."""
    if engine not in SEARCH_ENGINES:
        raise ValidationError(
            f"Unknown mode {engine[:40]!r}; allowed: {', '.join(SEARCH_ENGINES)}.",
            code="invalid_mode",
            hint="Send mode rag (passages) or graph (facts and passages from the graph walk).",
        )
    if not question.strip():
        raise ValidationError("The question is empty.", code="invalid_question", hint="Send a question to search for.")
    found = evidence_retrieve(
        actor=actor, question=question, engine=engine, scope=scope, graph_id=graph_id, limit=limit
    )
    if found.contributor_ids:
        earnings_record(
            querier=actor, query=question.strip(), contributor_ids=found.contributor_ids, source=UsageSource.SEARCH
        )
    return [{"n": n, **item} for n, item in enumerate(found.items, start=1)]
