"""Web pages: the billing page (balance, history, buy buttons) and its checkout button."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from billing.models import EntryKind
from billing.prices import price_list
from billing.selectors import credit_summary_for_user, earnings_total_for_user, ledger_list_for_user, pack_list
from billing.services import checkout_session_create
from exograph.core.errors import ExoGraphError


@login_required
def billing_page(request: HttpRequest) -> HttpResponse:
    actor = request.user
    outcome = request.GET.get("checkout")
    if outcome == "success":
        messages.success(request, "Thank you! Your credits appear as soon as Stripe confirms the payment.")
    elif outcome == "cancelled":
        messages.info(request, "Checkout cancelled; nothing was charged.")
    kind = request.GET.get("kind", "")
    kind = kind if kind in EntryKind.values else ""
    entries = ledger_list_for_user(actor=actor, kind=kind or None)  # type: ignore[arg-type]
    page = Paginator(entries, 25).get_page(request.GET.get("page"))
    context = {
        "summary": credit_summary_for_user(actor=actor),  # type: ignore[arg-type]
        "earnings": earnings_total_for_user(actor=actor),  # type: ignore[arg-type]
        "packs": pack_list(),
        "prices": price_list(),
        "page": page,
        "kinds": EntryKind.choices,
        "kind": kind,
        "query": urlencode({"kind": kind}) if kind else "",
    }
    return render(request, "billing/billing.html", context)


@login_required
@require_POST
def checkout(request: HttpRequest) -> HttpResponse:
    try:
        session = checkout_session_create(actor=request.user, pack=str(request.POST.get("pack", "")))  # type: ignore[arg-type]
    except ExoGraphError as exc:
        messages.error(request, f"{exc.message} {exc.hint}".strip())
        return redirect("billing:page")
    return redirect(session.url)
