"""Web search clients, by settings: Brave Search API (WEB_SEARCH_PROVIDER=brave; key in
X-Subscription-Token) or a SearXNG JSON endpoint (searxng; format=json). The endpoint is the
operator's configuration, so it is called directly (not through the SSRF-checked fetcher); the result
URLs it returns are not, and are only ever fetched through it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import httpx
from django.conf import settings
from django.utils import timezone

from exograph.core.errors import ServiceUnavailable, ValidationError


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str
    published: date | None = None  # Brave's page_age, SearXNG's publishedDate, when given


def _day(value: object) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def web_search_configured() -> bool:
    return bool(settings.WEB_SEARCH_URL)


def _unavailable(detail: str) -> ServiceUnavailable:
    return ServiceUnavailable(
        f"The web search API ({settings.WEB_SEARCH_PROVIDER}) is unavailable: {detail}.",
        code="web_search_unavailable",
        hint="Retry later, or check WEB_SEARCH_URL and WEB_SEARCH_API_KEY.",
    )


def web_search(
    *, query: str, count: int = 5, date_from: date | None = None, date_to: date | None = None
) -> list[SearchResult]:
    """Search the configured API (Brave narrows to the date range itself; callers still filter on the
    results' dates). Network call; raises ValidationError (not configured), ServiceUnavailable."""
    if not web_search_configured():
        raise ValidationError(
            "No web search API is configured.",
            code="web_search_not_configured",
            hint="Set WEB_SEARCH_URL (and WEB_SEARCH_API_KEY) to a Brave Search or SearXNG endpoint.",
        )
    brave = settings.WEB_SEARCH_PROVIDER == "brave"
    params: dict[str, str | int] = {"q": query[:400], "count": count}
    headers = {"Accept": "application/json"}
    if brave:
        if settings.WEB_SEARCH_API_KEY:
            headers["X-Subscription-Token"] = settings.WEB_SEARCH_API_KEY
        if date_from or date_to:
            start = date_from or date(1970, 1, 1)
            end = date_to or max(start, timezone.now().date())
            params["freshness"] = f"{start.isoformat()}to{end.isoformat()}"
    else:
        params["format"] = "json"
        if settings.WEB_SEARCH_API_KEY:
            headers["Authorization"] = f"Bearer {settings.WEB_SEARCH_API_KEY}"
    try:
        response = httpx.get(
            settings.WEB_SEARCH_URL, params=params, headers=headers, timeout=settings.WEB_FETCH_TIMEOUT_SECONDS
        )
    except httpx.HTTPError as exc:
        raise _unavailable(type(exc).__name__) from exc
    if response.status_code >= 400:
        raise _unavailable(f"HTTP {response.status_code}")
    try:
        payload = response.json()
        rows = (payload.get("web") or {}).get("results", []) if brave else payload.get("results", [])
        results = [
            SearchResult(
                title=str(row.get("title") or ""),
                url=str(row["url"]),
                snippet=str((row.get("description") if brave else row.get("content")) or ""),
                published=_day(row.get("page_age") if brave else row.get("publishedDate")),
            )
            for row in rows
            if isinstance(row, dict) and row.get("url")
        ]
    except (ValueError, AttributeError, TypeError) as exc:
        raise _unavailable("a malformed reply") from exc
    return results[:count]
