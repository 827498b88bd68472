"""A research run's stored steps: each step's capture from the hold and its result in one transaction, the run's
progress, and the source hits as steps store them. The pipeline's `_Run` adds the steps themselves."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict
from datetime import date
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from billing.models import Hold, HoldStatus
from exograph.core.errors import Conflict
from exograph.core.scope import Scope
from exograph.sources.base import RequestBudget, SearchOptions, SourceAdapter, SourceHit
from research.events import research_event_send
from research.models import ACTIVE_STATUSES, ResearchSession, ResearchSource, ResearchStep

EXCERPT_CHARS = 3000


class Stopped(Exception):
    """The session was cancelled (or its hold closed) while the pipeline ran."""


def step_capture_key(session: ResearchSession, step_key: str) -> str:
    return f"research:{session.id}:step:{step_key}"


def hit_from(data: dict[str, Any]) -> SourceHit:
    published = data.get("published")
    return SourceHit(
        adapter=str(data["adapter"]),
        kind=data["kind"],
        key=str(data["key"]),
        title=str(data.get("title") or "")[:500],
        url=str(data.get("url") or ""),
        snippet=str(data.get("snippet") or ""),
        published=date.fromisoformat(published) if published else None,
        authors=tuple(data.get("authors") or ()),
    )


def hit_to(hit: SourceHit) -> dict[str, Any]:
    data = asdict(hit)
    data["published"] = hit.published.isoformat() if hit.published else None
    data["authors"] = list(hit.authors)
    data["snippet"] = hit.snippet[:EXCERPT_CHARS]
    return data


def same_source_keys(hit: dict[str, Any]) -> set[str]:
    """The keys under which two hits are one source: the adapter key, the URL (no scheme, www, query or trailing
    slash) and the title (letters and digits only, case folded)."""
    keys = {f"key:{hit['key']}"}
    url = str(hit.get("url") or "").strip()
    if url:
        bare = re.sub(r"^[a-z]+://(www\.)?", "", url.casefold()).split("#")[0].split("?")[0].rstrip("/")
        keys.add(f"url:{bare}")
    title = re.sub(r"[\W_]+", " ", str(hit.get("title") or "").casefold()).strip()
    if len(title) >= 12:
        keys.add(f"title:{title}")
    return keys


class RunSteps:
    """A run of one session: its stored steps, its hold (what is left, capturing a step's price), its progress."""

    def __init__(self, session: ResearchSession) -> None:
        self.session = session
        self.prices = settings.RESEARCH_STEP_PRICES[session.model]
        self.steps = {s.key: s for s in ResearchStep.objects.filter(session=session)}
        self.budget = RequestBudget(remaining=int(settings.RESEARCH_MAX_SOURCE_REQUESTS))
        self.notes: list[str] = []
        options = session.options or {}
        self.options = SearchOptions(
            date_from=date.fromisoformat(options["date_from"]) if options.get("date_from") else None,
            date_to=date.fromisoformat(options["date_to"]) if options.get("date_to") else None,
            excluded_domains=tuple(options.get("excluded_domains") or ()),
        )
        self._adapters: list[SourceAdapter] | None = None

    # --- plumbing --------------------------------------------------------------------------------

    def adapters(self) -> list[SourceAdapter]:
        from research.sources import adapters_for

        if self._adapters is None:
            kinds = list((self.session.options or {}).get("sources") or ["local"])
            # The session's scope decides whether `local` reads the owner's private graphs (research.sources).
            self._adapters = adapters_for(kinds, actor=self.session.owner, scope=Scope(self.session.scope))
        return self._adapters

    def hold(self) -> Hold:
        hold = Hold.objects.filter(pk=self.session.hold_id).first() if self.session.hold_id else None
        if hold is None or hold.status != HoldStatus.OPEN:
            raise Stopped()
        return hold

    def remaining(self) -> int:
        return self.hold().remaining

    def check_active(self) -> None:
        status = ResearchSession.objects.filter(pk=self.session.pk).values_list("status", flat=True).first()
        if status not in ACTIVE_STATUSES:
            raise Stopped()

    def progress(self, *, step: str, percent: int, **counts: int) -> None:
        from billing.services import credits_hold_touch

        fields: dict[str, Any] = {"step": step, "percent": max(0, min(99, percent)), **counts}
        ResearchSession.objects.filter(pk=self.session.pk).update(modified=timezone.now(), **fields)
        for name, value in fields.items():
            setattr(self.session, name, value)
        try:
            credits_hold_touch(hold=self.hold())  # a long session keeps its hold alive
        except Conflict as exc:
            raise Stopped() from exc
        research_event_send(self.session)

    def affordable(self, cost: int, *, reserve: int = 0) -> bool:
        return self.remaining() >= cost + reserve

    def done(self, key: str) -> ResearchStep | None:
        return self.steps.get(key)

    def store(
        self,
        key: str,
        *,
        result: dict[str, Any],
        cost: int,
        source: dict[str, Any] | None = None,
        also: Callable[[], object] | None = None,
    ) -> None:
        """Capture the step's price and store its result (and its source, and `also`) in one transaction."""
        from billing.services import credits_capture

        try:
            with transaction.atomic():
                if cost:
                    credits_capture(
                        hold=self.hold(),
                        amount=cost,
                        idempotency_key=step_capture_key(self.session, key),
                        reference=f"research {self.session.id} step {key.split(':')[0]}",
                    )
                step = ResearchStep.objects.create(
                    session=self.session, key=key, ordinal=len(self.steps) + 1, result=result, credits=cost
                )
                if source is not None:
                    number = ResearchSource.objects.filter(session=self.session).count() + 1
                    ResearchSource.objects.create(session=self.session, number=number, **source)
                    result["number"] = number
                    ResearchStep.objects.filter(pk=step.pk).update(result=result)
                ResearchSession.objects.filter(pk=self.session.pk).update(credits_spent=F("credits_spent") + cost)
                if also is not None:
                    also()
        except IntegrityError:
            # Another delivery of this task stored the step first: keep its result (its capture is the one).
            existing = ResearchStep.objects.filter(session=self.session, key=key).first()
            if existing is None:
                raise
            self.steps[key] = existing
            return
        except Conflict as exc:  # the hold closed under us: cancelled
            raise Stopped() from exc
        self.steps[key] = step
        self.session.refresh_from_db(fields=["credits_spent"])
