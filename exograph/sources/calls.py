"""What the research source adapters share: one metered API call through the safe fetcher, the error
that names a source that is down, a query's content words, and the cap on a source's text."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from urllib.parse import urlencode

from django.conf import settings

from exograph.core.errors import ServiceUnavailable
from exograph.sources.base import RequestBudget
from exograph.sources.fetch import FetchedPage, FetchFailed, FetchRefused, fetch

_STOPWORDS = frozenset(
    "a about an and are as at be between by can could do does for from has have how in into is it its of on "
    "or should that the their there these this those to was were what when where which who why will with "
    "would".split()
)


def content_terms(query: str, *, limit: int) -> list[str]:
    """The query's distinct content words, lower case, in order, at most limit (letters and digits only,
    so no query syntax of an API reaches it)."""
    words = [word for word in re.findall(r"[^\W_]+", query.lower()) if word not in _STOPWORDS]
    return list(dict.fromkeys(words))[:limit]


def broader_terms(terms: Sequence[str], *, keep: int = 3) -> list[str]:
    """The keep longest terms in their order (longer words are the more specific): the one retry when
    all the terms together found nothing. [] when there is nothing broader to try."""
    if len(terms) <= keep:
        return []
    longest = sorted(range(len(terms)), key=lambda i: -len(terms[i]))[:keep]
    return [terms[i] for i in sorted(longest)]


def source_unavailable(*, source: str, detail: str, setting: str) -> ServiceUnavailable:
    """The error for a source that is down or answered something unusable (the caller skips it)."""
    return ServiceUnavailable(
        f"The {source} API is unavailable: {detail}",
        code="source_unavailable",
        hint=f"Retry later, or check {setting}.",
        extra={"source": source},
    )


def source_get(
    *,
    source: str,
    setting: str,
    url: str,
    params: Mapping[str, str | int],
    accept: Sequence[str],
    budget: RequestBudget,
) -> FetchedPage:
    """GET an API endpoint through the safe fetcher, taking one request from budget first (a failed
    request still counts). Network call; raises SourceBudgetExhausted, ServiceUnavailable naming source."""
    budget.spend()
    full = f"{url}{'&' if '?' in url else '?'}{urlencode(params)}"
    try:
        page = fetch(
            full,
            accept=accept,
            max_bytes=settings.RESEARCH_SOURCE_MAX_BYTES,
            timeout=settings.RESEARCH_SOURCE_TIMEOUT_SECONDS,
        )
    except (FetchRefused, FetchFailed) as exc:
        raise source_unavailable(source=source, detail=exc.message, setting=setting) from exc
    if page.truncated:
        raise source_unavailable(
            source=source,
            detail=f"its reply is larger than {settings.RESEARCH_SOURCE_MAX_BYTES} bytes.",
            setting="RESEARCH_SOURCE_MAX_BYTES",
        )
    return page


def capped(text: str) -> str:
    """text cut to RESEARCH_SOURCE_MAX_CHARS, at a word boundary when one is near."""
    limit = settings.RESEARCH_SOURCE_MAX_CHARS
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ", limit - 200)
    return cut[:space] if space > 0 else cut
