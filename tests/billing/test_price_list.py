"""The price list people read (the billing page, the landing page, the README) is rendered from the one price table,
settings.BILLING_PRICES: every action in it is shown, with its numbers, so none can go missing; an upload's price is
shown for a document (per page) and for a text note (per DOCUMENTS_TEXT_CHARS_PER_UNIT characters)."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.conf import settings as django_settings

from billing import prices

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr data-action="([^"]+)"><td>([^<]*)</td><td class="num">([^<]*)</td></tr>')


def _rows(page: str) -> list[tuple[str, str, str]]:
    return [(action, html.unescape(label), html.unescape(cost)) for action, label, cost in ROW.findall(page)]


def _shows(rows: list[tuple[str, str, str]], action: str, price: dict[str, int]) -> bool:
    """Whether some row of action shows price: 'free' for a free action, else its base (if any) and per-unit."""
    costs = [cost for shown, _, cost in rows if shown == action]
    if not price["base"] and not price["per_unit"]:
        return "free" in costs
    numbers = [str(price["per_unit"])] + ([str(price["base"])] if price["base"] else [])
    return any(all(re.search(rf"(?<![\d,]){n}(?!,?\d)", cost) for n in numbers) for cost in costs)


def test_the_billing_page_shows_every_action_of_the_price_table_with_its_price(client: Any, alice: Any, settings: Any):
    # Distinct numbers, and an action the page has never heard of: it is listed under its own name, never dropped.
    settings.BILLING_PRICES = {
        **settings.BILLING_PRICES,
        "upload": {"base": 7, "per_unit": 2},
        "chat.snap": {"base": 0, "per_unit": 4},
        "import": {"base": 0, "per_unit": 6},
        "summarise": {"base": 1, "per_unit": 8},
    }
    settings.DOCUMENTS_TEXT_CHARS_PER_UNIT = 2500
    client.force_login(alice)
    rows = _rows(client.get("/billing/").content.decode())
    missing = [action for action, price in settings.BILLING_PRICES.items() if not _shows(rows, action, price)]
    assert not missing, rows
    upload = {label: cost for action, label, cost in rows if action == "upload"}
    assert "7 + 2 per page" in upload.values()
    assert any(
        "text note" in label.lower() and cost == "7 + 2 per 2,500 characters (started)"
        for label, cost in upload.items()
    ), upload
    assert ("summarise", "summarise", "1 + 8 per unit") in rows


def test_the_landing_page_lists_the_same_prices(client: Any, settings: Any):
    settings.BILLING_PRICES = {**settings.BILLING_PRICES, "import": {"base": 0, "per_unit": 6}}
    rows = _rows(client.get("/").content.decode())
    assert rows == [(row["action"], row["label"], row["cost"]) for row in prices.price_list()]
    assert all(_shows(rows, action, price) for action, price in settings.BILLING_PRICES.items())


def test_the_readme_price_table_is_the_price_list() -> None:
    """The README's table, row for row, is price_list() of the shipped prices (run with the default settings)."""
    readme = (django_settings.BASE_DIR / "README.md").read_text(encoding="utf-8")
    for row in prices.price_list():
        assert f"| {row['label']} | {row['cost']} |" in readme, row
