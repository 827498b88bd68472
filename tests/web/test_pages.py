"""Server-rendered pages: landing, dashboard, explorer, MCP setup, billing filters, error pages, CSP-safe markup."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from billing.models import EntryKind
from billing.selectors import earnings_total_for_user, usage_daily_for_user
from billing.services.ledger import credits_charge, credits_grant

pytestmark = pytest.mark.django_db

PAGES = [
    "/",
    "/graphs/",
    "/graphs/explore/",
    "/graphs/search/",
    "/graphs/world/",
    "/documents/",
    "/chat/",
    "/billing/",
    "/account/keys/",
    "/mcp-setup/",
]


def test_landing_shows_prices_from_settings_and_mcp_configs(client, settings):
    settings.BILLING_PRICES = {**settings.BILLING_PRICES, "upload": {"base": 7, "per_unit": 2}}
    page = client.get("/").content.decode()
    assert "7 + 2 per page" in page
    assert "Import facts into a graph" in page and "5 per 1,000 triples (started)" in page
    assert "http://testserver/mcp" in page and "claude mcp add" in page and "mcpServers" in page
    assert 'href="/signup/"' in page


@pytest.mark.parametrize("path", PAGES)
def test_every_page_renders_with_nav_and_no_inline_script_or_style(client, alice, path):
    client.force_login(alice)
    response = client.get(path)
    assert response.status_code == 200, path
    html = response.content.decode()
    assert 'aria-label="Main"' in html and "/static/vendor/htmx/htmx.min.js" in html
    assert "style=" not in html, "inline styles are refused by the CSP"
    assert not re.search(r"\son[a-z]+=", html), "inline event handlers are refused by the CSP"
    for tag in re.findall(r"<script[^>]*>", html):
        assert "src=" in tag or "nonce=" in tag, tag


def test_search_page_has_no_label_without_a_field(client, alice):
    client.force_login(alice)
    html = client.get("/graphs/search/").content.decode()
    assert "Graph id" not in html


def test_dashboard_shows_balance_earnings_and_a_30_day_usage_chart(client, alice):
    credits_grant(account=alice, amount=50, kind=EntryKind.EARNING, key="earned-1", reference="world use")
    credits_charge(account=alice, action="upload", units=3, idempotency_key="dash-upload")
    client.force_login(alice)
    html = client.get("/").content.decode()
    assert 'id="dashboard-balance"' in html and "42 <small>credits" in html
    assert "50 <small>credits earned" in html
    assert html.count('<rect class="bar') == 60  # two charts of 30 days


def test_usage_daily_counts_metered_actions_per_day_with_zero_days(alice, bob):
    credits_grant(account=alice, amount=100, kind=EntryKind.ADMIN_ADJUST, key="usage-grant", reference="")
    credits_charge(account=alice, action="upload", units=1, idempotency_key="usage-1")
    credits_charge(account=alice, action="chat.snap", idempotency_key="usage-2")
    credits_grant(account=bob, amount=100, kind=EntryKind.ADMIN_ADJUST, key="usage-grant-b", reference="")
    credits_charge(account=bob, action="upload", units=1, idempotency_key="usage-b")
    days = usage_daily_for_user(actor=alice, days=30)
    assert len(days) == 30 and sum(d["actions"] for d in days[:-1]) == 0
    assert days[-1]["actions"] == 2 and days[-1]["spent"] == 6 + 3
    assert earnings_total_for_user(actor=alice) == {"total": 0, "last_30_days": 0}


def test_billing_ledger_filters_by_kind(client, alice):
    credits_grant(account=alice, amount=9, kind=EntryKind.EARNING, key="filter-earn", reference="earned-ref")
    credits_grant(account=alice, amount=5, kind=EntryKind.ADMIN_ADJUST, key="filter-adj", reference="adjust-ref")
    client.force_login(alice)
    html = client.get("/billing/", {"kind": "earning"}).content.decode()
    assert "earned-ref" in html and "adjust-ref" not in html
    assert "adjust-ref" in client.get("/billing/").content.decode()


def test_explorer_page_of_a_foreign_graph_is_404(client, alice, charlie):
    from exograph.core.scope import Scope
    from exograph.graphs.services import graph_create

    graph = graph_create(actor=alice, name="Secret", scope=Scope.PRIVATE)
    client.force_login(charlie)
    assert client.get(f"/graphs/{graph.id}/explore/").status_code == 404
    client.force_login(alice)
    page = client.get(f"/graphs/{graph.id}/explore/").content.decode()
    assert f"/api/v1/graphs/{graph.id}/explore/" in page and "vendor/cytoscape/cytoscape.min.js" in page


@override_settings(DEBUG=False)
def test_csrf_failure_shows_the_403_page(alice):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/graphs/", {"name": "x", "scope": "private"})
    assert response.status_code == 403
    assert b"Not allowed" in response.content


def test_documents_page_accepts_what_the_upload_api_accepts(client, alice):
    from exograph.documents.validation import EXTENSIONS

    client.force_login(alice)
    html = client.get("/documents/").content.decode()
    assert f'accept="{",".join(sorted(EXTENSIONS))}"' in html and 'id="dropzone"' in html
    # The label names each kind once, in words a newcomer knows (not "MARKDOWN, MD" for one kind).
    label = html.split("or choose one (", 1)[1].split(")", 1)[0]
    assert label.count("Markdown") == 1 and "MARKDOWN" not in label and "PDF" in label and "Word" in label, label
