"""A research request's input checks: the query, model, budget, sources, options, watch and target graph.

research_session_quote and research_session_create take the same request (ResearchAsk) and check it here, so
a dry run and a start refuse the same inputs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Required, TypedDict

from django.conf import settings

from exograph.accounts.models import User
from exograph.core.errors import NotFound, ValidationError
from exograph.core.scope import Scope
from exograph.graphs.models import Graph
from exograph.sources.base import SearchOptions
from exograph.sources.filters import MAX_EXCLUDED_DOMAINS, normalize_domain, search_options
from research.models import ResearchModel, WatchInterval

SOURCE_KINDS = ("paper", "article", "local")
DEFAULT_SOURCES = ("paper", "article", "local")


def research_price(model: str) -> int:
    """The model's price (BILLING_PRICES research.<model>): the least budget and the default one."""
    from billing.prices import price_for

    return price_for(f"research.{model}")


def _check_query(query: object) -> str:
    if not isinstance(query, str):
        raise ValidationError("query must be a string.", code="invalid_query", hint='Send {"query": "your topic"}.')
    text = " ".join(query.replace("\x00", " ").split())
    low, high = settings.RESEARCH_QUERY_MIN_CHARS, settings.RESEARCH_QUERY_MAX_CHARS
    if len(text) < low or len(text) > high:
        raise ValidationError(
            f"query must be {low} to {high:,} characters; got {len(text):,}.",
            code="invalid_query",
            hint="Describe the topic in a sentence or a few keywords.",
        )
    return text


def _check_model(model: object) -> str:
    if model not in ResearchModel.values:
        raise ValidationError(
            f"Unknown model {str(model)[:40]!r}; allowed: snap, ponder.",
            code="invalid_model",
            hint="Send model snap (30 credits) or ponder (100 credits).",
        )
    return str(model)


def _check_budget(budget: object, *, model: str) -> int:
    price = research_price(model)
    if budget is None:
        return price
    if isinstance(budget, float) and budget.is_integer():
        budget = int(budget)
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise ValidationError(
            f"budget_credits must be a whole number of credits; got {str(budget)[:30]!r}.",
            code="invalid_budget",
            hint=f"Send a whole number of at least {price}.",
        )
    if budget < price:
        raise ValidationError(
            f"budget_credits must be at least the {model} price, {price} credits; got {budget}.",
            code="invalid_budget",
            hint=f"Send budget_credits of {price} or more, or leave it out to spend {price}.",
        )
    return budget


def _check_sources(sources: object) -> list[str]:
    if sources is None:
        return list(DEFAULT_SOURCES)
    if not isinstance(sources, list | tuple) or not sources:
        raise ValidationError(
            "sources must be a non-empty list.", code="invalid_sources", hint='Send e.g. ["paper", "article"].'
        )
    if len(sources) > len(SOURCE_KINDS):
        raise ValidationError(
            f"sources lists at most {len(SOURCE_KINDS)} kinds ({', '.join(SOURCE_KINDS)}); got {len(sources):,}.",
            code="invalid_sources",
            hint='Name each kind you want once, e.g. ["paper", "article"].',
        )
    cleaned: list[str] = []
    for kind in sources:
        if kind not in SOURCE_KINDS:
            raise ValidationError(
                f"Unknown source kind {str(kind)[:30]!r} in sources; allowed: {', '.join(SOURCE_KINDS)}.",
                code="invalid_sources",
                hint='Send some of "paper", "article", "local".',
            )
        if kind in cleaned:
            raise ValidationError(f"sources names {kind!r} twice.", code="invalid_sources", hint="Name each kind once.")
        cleaned.append(str(kind))
    return cleaned


_NOT_A_HOST = re.compile(r"[/\\:?#@\s]")


def _check_domains(excluded_domains: object) -> list[str]:
    """excluded_domains as sent: a list of at most MAX_EXCLUDED_DOMAINS bare host names (IDNA-encodable; no
    scheme, path, port or spaces); search_options then normalises them. Raises ValidationError naming the entry."""
    if excluded_domains is None:
        return []
    if not isinstance(excluded_domains, list | tuple) or not all(isinstance(d, str) for d in excluded_domains):
        raise ValidationError(
            "excluded_domains must be a list of domain names.",
            code="invalid_excluded_domains",
            hint='Send e.g. ["example.com"].',
        )
    if len(excluded_domains) > MAX_EXCLUDED_DOMAINS:
        raise ValidationError(
            f"excluded_domains lists at most {MAX_EXCLUDED_DOMAINS} domains; got {len(excluded_domains):,}.",
            code="too_many_domains",
            hint="Exclude a parent domain to cover its subdomains (example.com excludes blog.example.com).",
        )
    for index, value in enumerate(excluded_domains):
        problem = ""
        if _NOT_A_HOST.search(value.strip()):
            problem = "a domain name has no scheme, path, port or spaces"
        else:
            try:
                normalize_domain(value)
            except ValidationError:
                problem = "not a valid host name"
        if problem:
            raise ValidationError(
                f"excluded_domains[{index}] {value[:100]!r} is not a domain name: {problem}.",
                code="invalid_domain",
                hint="Send bare host names like example.com (subdomains are excluded with them).",
            )
    return list(excluded_domains)


def _check_options(*, date_from: date | None, date_to: date | None, excluded_domains: object) -> SearchOptions:
    """The session's source options, validated and normalised by the sources' one rule (filters.search_options)."""
    domains = _check_domains(excluded_domains)
    return search_options(date_from=date_from, date_to=date_to, excluded_domains=domains)


def _check_watch(watch: object) -> str:
    if watch in (None, ""):
        return ""
    if watch not in WatchInterval.values:
        raise ValidationError(
            f"watch must be daily, weekly or null; got {str(watch)[:20]!r}.",
            code="invalid_watch",
            hint="Send watch daily or weekly to re-run the topic on a schedule.",
        )
    return str(watch)


def _target_graph(
    *, actor: User, graph_id: str | None, scope: Scope | None, default_scope: Scope
) -> tuple[Graph | None, Scope]:
    """The graph to write into (None: a new research graph) and the session's scope. Raises NotFound, ValidationError."""
    if not graph_id:
        return None, Scope(scope or default_scope)
    # Only the caller's own graphs are writable targets: a foreign or unknown id is the same 404.
    graph = Graph.objects.filter(id=str(graph_id)[:64], owner=actor).first()
    if graph is None or graph.is_world:
        raise NotFound(
            f"No graph with id {str(graph_id)[:80]!r} that you can write to.",
            code="graph_not_found",
            hint="List your graphs with GET /api/v1/graphs/, or leave graph_id out to create a research graph.",
        )
    if scope is not None and Scope(scope) != graph.scope:
        raise ValidationError(
            f"A {scope}-scope session cannot write to graph {graph.id}, which is {graph.scope}.",
            code="graph_scope_mismatch",
            hint=f"Send graph_scope {graph.scope}, or pick a {scope} graph.",
        )
    return graph, Scope(graph.scope)


class ResearchAsk(TypedDict, total=False):
    """What a research request asks for, as research_session_quote and research_session_create take it
    (keywords; `query` is required, the others default as `checked_request` says)."""

    query: Required[object]
    budget_credits: object
    graph_id: str | None
    scope: Scope | None
    default_scope: Scope
    model: object
    sources: object
    date_from: date | None
    date_to: date | None
    excluded_domains: object
    watch: object


@dataclass(frozen=True)
class CheckedRequest:
    """A create request, validated: what the session would be and hold."""

    topic: str
    model: str
    budget: int
    kinds: list[str]
    domains: list[str]
    interval: str
    graph: Graph | None  # None: a new research graph
    scope: Scope
    date_from: date | None
    date_to: date | None


def checked_request(
    *,
    actor: User,
    query: object,
    budget_credits: object = None,
    graph_id: str | None = None,
    scope: Scope | None = None,
    default_scope: Scope = Scope.PRIVATE,
    model: object = ResearchModel.SNAP,
    sources: object = None,
    date_from: date | None = None,
    date_to: date | None = None,
    excluded_domains: object = None,
    watch: object = None,
) -> CheckedRequest:
    """research_session_create's input checks (a quote makes the same). Raises ValidationError, NotFound."""
    topic = _check_query(query)
    checked_model = _check_model(model)
    budget = _check_budget(budget_credits, model=checked_model)
    kinds = _check_sources(sources)
    domains = list(
        _check_options(date_from=date_from, date_to=date_to, excluded_domains=excluded_domains).excluded_domains
    )
    interval = _check_watch(watch)
    graph, session_scope = _target_graph(actor=actor, graph_id=graph_id, scope=scope, default_scope=default_scope)
    return CheckedRequest(
        topic=topic,
        model=checked_model,
        budget=budget,
        kinds=kinds,
        domains=domains,
        interval=interval,
        graph=graph,
        scope=session_scope,
        date_from=date_from,
        date_to=date_to,
    )
