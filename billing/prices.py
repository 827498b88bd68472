"""What things cost, read from the one price table (settings.BILLING_PRICES).

Actions: "upload" (5 + 1 per page; units = pages, a text note's pages are its started DOCUMENTS_TEXT_CHARS_PER_UNIT
characters), "chat.snap" (3), "chat.ponder" (10; on the offline reader a ponder message is charged as snap, see
chat_action), "research.snap" (30), "research.ponder" (100; research holds min(price, budget_credits):
pass ``max_cost=budget_credits``), "import" (5 per started 1,000 rows of triples or entity records; units =
thousands), and the free "search", "graph", "list", "status".
"""

from __future__ import annotations

from typing import TypedDict

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


def chat_action(model: str) -> str:
    """The price-table key a chat message of `model` ("snap" or "ponder") is charged under.

    The offline reader (CHAT_PROVIDER "extractive", the `make run` default) answers a ponder message exactly as a snap
    one: the same reader over the same evidence, with no model, no larger context and no checking pass. So there it
    costs what snap costs ("chat.snap"); with a language model (openai, anthropic) ponder is the strong model, its
    larger context and a second checking pass, at its own price ("chat.ponder")."""
    if model == "ponder" and settings.CHAT_PROVIDER == "extractive":
        return "chat.snap"
    return f"chat.{model}"


class PriceRow(TypedDict):
    action: str  # the BILLING_PRICES key
    label: str
    cost: str


# What each action is called where prices are listed, and what its units are ("" for one per request). An action
# of the price table not named here is still listed, under its key, priced per unit: none can be left out.
PRICE_LABELS: dict[str, tuple[str, str]] = {
    "upload": ("Upload a PDF or Word document", "page"),
    "chat.snap": ("Chat message (snap)", ""),
    "chat.ponder": ("Chat message (ponder)", ""),
    "research.snap": ("Research session (snap)", ""),
    "research.ponder": ("Research session (ponder)", ""),
    "import": ("Import facts into a graph", "1,000 triples (started)"),
    "search": ("Search entities and passages", ""),
    "graph": ("Explore a graph or the World Graph", ""),
    "list": ("List graphs, documents and sessions", ""),
    "status": ("Status of a document or session", ""),
}


def _cost(price: dict[str, int], unit: str) -> str:
    base, per_unit = int(price["base"]), int(price["per_unit"])
    if not base and not per_unit:
        return "free"
    if not unit:
        return str(base + per_unit)
    return f"{base} + {per_unit} per {unit}" if base else f"{per_unit} per {unit}"


def price_list() -> list[PriceRow]:
    """Every action of settings.BILLING_PRICES, in the table's order, as rows to show people (the billing and
    landing pages; the README's table is this list). An upload has two rows: a document is priced per page, a text
    note (plain text or Markdown) per started DOCUMENTS_TEXT_CHARS_PER_UNIT characters."""
    rows: list[PriceRow] = []
    for action, price in settings.BILLING_PRICES.items():
        label, unit = PRICE_LABELS.get(action, (action, "unit"))
        cost = _cost(price, unit)
        if action.startswith("research.") and cost != "free":
            cost = f"{cost}, never more than your budget"
        charged_as = chat_action(action.removeprefix("chat.")) if action.startswith("chat.") else action
        if charged_as != action and charged_as in settings.BILLING_PRICES:
            as_snap = _cost(settings.BILLING_PRICES[charged_as], unit)
            cost = f"{as_snap} on the offline reader, which answers it as snap ({cost} with a language model)"
        rows.append({"action": action, "label": label, "cost": cost})
        if action == "upload":
            characters = f"{settings.DOCUMENTS_TEXT_CHARS_PER_UNIT:,} characters (started)"
            rows.append(
                {
                    "action": action,
                    "label": "Add a text note (plain text or Markdown)",
                    "cost": _cost(price, characters),
                }
            )
    return rows
