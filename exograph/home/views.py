"""The top layer's pages: the landing page for visitors and the dashboard once logged in (balance, documents, chats,
research, earnings, usage). It reads every feature; no feature imports it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from billing.selectors import credit_summary_for_user, earnings_total_for_user, pack_list, usage_daily_for_user
from exograph.accounts.connect import mcp_configs
from exograph.chat.selectors import chat_session_list_for_user
from exograph.core.charts import bar_chart
from exograph.documents.selectors import document_list_for_user
from exograph.home.selectors import first_run_checklist_for_user
from research.selectors import research_session_list_for_user


def dashboard(request: HttpRequest) -> HttpResponse:
    """The landing page for visitors; the dashboard (balance, documents, earnings, usage) once logged in."""
    if not request.user.is_authenticated:
        return render(
            request,
            "home/landing.html",
            {
                "prices": _price_rows(),
                "packs": pack_list(),
                "mcp": mcp_configs(request),
                "signup_credits": settings.BILLING_SIGNUP_CREDITS,
            },
        )
    user = request.user
    summary = credit_summary_for_user(actor=user)  # type: ignore[arg-type]
    usage = usage_daily_for_user(actor=user, days=30)  # type: ignore[arg-type]
    checklist = first_run_checklist_for_user(user=user)  # type: ignore[arg-type]
    context = {
        "summary": summary,
        "checklist": checklist,
        "checklist_left": sum(not step["done"] for step in checklist),
        "documents": list(document_list_for_user(user=user)[:5]),  # type: ignore[arg-type]
        "chat_sessions": list(chat_session_list_for_user(user=user)[:5]),  # type: ignore[arg-type]
        "research_sessions": list(research_session_list_for_user(user=user, scope=None)[:5]),  # type: ignore[arg-type]
        "earnings": earnings_total_for_user(actor=user),  # type: ignore[arg-type]
        "usage_chart": bar_chart([d["actions"] for d in usage], [d["day"].isoformat() for d in usage]),
        "spend_chart": bar_chart([d["spent"] for d in usage], [d["day"].isoformat() for d in usage]),
    }
    return render(request, "home/dashboard.html", context)


PRICE_LABELS = {
    "upload": "Upload a document",
    "chat.snap": "Chat message (snap)",
    "chat.ponder": "Chat message (ponder)",
    "research.snap": "Research session (snap)",
    "research.ponder": "Research session (ponder)",
    "import": "Import facts into a graph",
}


def _price_rows() -> list[dict[str, Any]]:
    """The price table in settings.BILLING_PRICES, as rows for the landing page."""
    rows = []
    for action, label in PRICE_LABELS.items():
        price = settings.BILLING_PRICES.get(action)
        if price is None:
            continue
        base, per_unit = int(price["base"]), int(price["per_unit"])
        if action == "upload":
            cost = f"{base} + {per_unit} per page"
        elif action.startswith("research."):
            cost = f"{per_unit}, never more than your budget"
        elif action == "import":
            cost = f"{per_unit} per 1,000 triples (started)"
        else:
            cost = str(base + per_unit)
        rows.append({"action": label, "cost": cost})
    rows.append({"action": "Search, World Graph, graphs and listings", "cost": "free"})
    return rows
