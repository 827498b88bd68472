"""The top layer's pages: the landing page for visitors and the dashboard once logged in (balance, documents, chats,
research, earnings, usage). It reads every feature; no feature imports it."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from billing.prices import price_list
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
                "prices": price_list(),
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
