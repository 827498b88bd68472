"""What things cost, read from the one price table (settings.BILLING_PRICES).

Actions: "upload" (5 + 1 per page; units = pages), "chat.snap" (3), "chat.ponder" (10),
"research.snap" (30), "research.ponder" (100; research holds min(price, budget_credits):
pass ``max_cost=budget_credits``), "import" (5 per started 1,000 rows of triples or entity records; units =
thousands), and the free "search", "graph", "list", "status".
"""

from __future__ import annotations

from django.conf import settings

from exograph.core.errors import ValidationError


def price_actions() -> list[str]:
    return sorted(settings.BILLING_PRICES)


def price_for(action: str, units: int = 1, *, max_cost: int | None = None) -> int:
    """Credits for `units` of `action` (never more than max_cost). Raises ValidationError on bad input."""
    price = settings.BILLING_PRICES.get(action)
    if price is None:
        raise ValidationError(
            f"Unknown priced action '{action[:50]}'.",
            code="unknown_action",
            hint=f"Use one of: {', '.join(price_actions())}.",
        )
    if isinstance(units, bool) or not isinstance(units, int) or units < 0:
        raise ValidationError(
            "units must be a whole number of at least 0.", code="invalid_units", hint="Pass a whole number."
        )
    if max_cost is not None and (isinstance(max_cost, bool) or not isinstance(max_cost, int) or max_cost < 1):
        raise ValidationError(
            "The budget must be a whole number of credits of at least 1.",
            code="invalid_budget",
            hint="Set budget_credits to a positive whole number.",
        )
    cost = int(price["base"]) + int(price["per_unit"]) * units
    if max_cost is not None:
        cost = min(cost, max_cost)
    return cost
