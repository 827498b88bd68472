"""Web pages: start a research session with a budget, watch it live (/ws/events/), cancel it, read the report."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from billing.web import FormTokenField, metered_form_run
from exograph.accounts.models import User
from exograph.core.errors import ExoGraphError, NotFound
from exograph.core.scope import Scope
from research.models import ResearchModel, WatchInterval
from research.selectors import research_session_get_for_user, research_session_list_for_user
from research.serializers import research_session_created_out, research_session_out
from research.services import research_session_cancel, research_session_start
from research.sources import kinds_available

WEB_CREATE_ENDPOINT = "research.create.web"
SOURCE_CHOICES = [
    ("paper", "Papers"),
    ("article", "Articles"),
    ("local", "World Graph (private scope: and your documents)"),
]
SOURCE_NEEDS = {"paper": "ARXIV_API_URL", "article": "WIKIPEDIA_API_URL or WEB_SEARCH_URL"}


class SourcesWidget(forms.CheckboxSelectMultiple):
    """Checkboxes whose unavailable sources are disabled (the form sets `unavailable`)."""

    unavailable: frozenset[str] = frozenset()

    def create_option(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        option: dict[str, Any] = super().create_option(*args, **kwargs)
        if option["value"] in self.unavailable:
            option["attrs"]["disabled"] = True
        return option


class ResearchForm(forms.Form):
    query = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=20_000, label="Topic")
    budget_credits = forms.IntegerField(required=False, label="Budget (credits)", help_text="snap 30+, ponder 100+")
    model = forms.ChoiceField(choices=ResearchModel.choices, initial=ResearchModel.SNAP)
    graph_scope = forms.ChoiceField(choices=Scope.choices, initial=Scope.PRIVATE, label="Scope")
    sources = forms.MultipleChoiceField(choices=SOURCE_CHOICES, widget=SourcesWidget)
    watch = forms.ChoiceField(choices=[("", "No"), *WatchInterval.choices], required=False, label="Re-run")
    form_token = FormTokenField()  # a double submit of this form starts one session and holds once

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Sources this server cannot read (no API configured: offline) are marked "(unavailable)", disabled and not
        ticked, as the chat page marks its web engine; the server would skip them anyway (adapters_for)."""
        super().__init__(*args, **kwargs)
        available = kinds_available()
        field = self.fields["sources"]
        assert isinstance(field, forms.MultipleChoiceField) and isinstance(field.widget, SourcesWidget)  # noqa: S101
        field.choices = [(v, label if available[v] else f"{label} (unavailable)") for v, label in SOURCE_CHOICES]
        field.initial = [v for v, _ in SOURCE_CHOICES if available[v]]
        field.widget.unavailable = frozenset(v for v, _ in SOURCE_CHOICES if not available[v])
        missing = [f"{label} need {SOURCE_NEEDS[v]}" for v, label in SOURCE_CHOICES if not available[v]]
        if missing:
            field.help_text = f"Unavailable on this server: {'; '.join(missing)} (not configured)."


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)  # noqa: S101 - login_required guarantees it
    return request.user


@login_required
def research_list(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    form = ResearchForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data

        def start(key: str) -> tuple[dict[str, Any], int]:
            session, spent = research_session_start(
                actor=user,
                idempotency_key=key,
                query=data["query"],
                budget_credits=data.get("budget_credits"),
                scope=Scope(data["graph_scope"]),
                model=data["model"],
                sources=list(data["sources"]),
                watch=data.get("watch") or None,
            )
            return {**research_session_created_out(session), **spent.fields()}, 202

        try:
            outcome = metered_form_run(request, account=user, endpoint=WEB_CREATE_ENDPOINT, work=start)
        except ExoGraphError as exc:
            messages.error(request, f"{exc.message} {exc.hint}".strip())
        else:
            if outcome.replayed:
                messages.info(request, "This research was already started by this form; nothing more was held.")
            else:
                messages.success(request, f"Research started: {outcome.body['credits_held']} credits held.")
            return redirect("research:detail", session_id=outcome.body["id"])
    page = Paginator(research_session_list_for_user(user=user, scope=None), 20).get_page(request.GET.get("page"))
    return render(request, "research/list.html", {"form": form, "page": page})


@login_required
def research_detail(request: HttpRequest, session_id: str) -> HttpResponse:
    try:
        session = research_session_get_for_user(user=_user(request), session_id=session_id)
    except NotFound as exc:
        return render(request, "404.html", {"message": exc.message}, status=404)
    return render(request, "research/detail.html", {"session": session, "data": research_session_out(session)})


@login_required
@require_POST
def research_cancel(request: HttpRequest, session_id: str) -> HttpResponse:
    try:
        session = research_session_cancel(actor=_user(request), session_id=session_id)
    except NotFound as exc:
        return render(request, "404.html", {"message": exc.message}, status=404)
    except ExoGraphError as exc:
        messages.error(request, f"{exc.message} {exc.hint}".strip())
        return redirect("research:list")
    messages.info(request, "Watch topic stopped." if session.status == "completed" else "Research cancelled.")
    return redirect("research:detail", session_id=session.id)
