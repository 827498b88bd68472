"""Source `web` (kind article): the configured web search API (exograph/sources/search.py: Brave or
SearXNG) for hits, the safe fetcher for pages (every result URL is checked: scheme, public address after
DNS, each redirect) and trafilatura for their main text. One request per search and per page."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings

from exograph.sources.base import RequestBudget, SearchOptions, SourceHit, SourceKind, SourceText
from exograph.sources.calls import capped
from exograph.sources.extract import main_text
from exograph.sources.fetch import FetchFailed, fetch
from exograph.sources.filters import filters_active, keep
from exograph.sources.search import web_search

BRAVE_MAX_COUNT = 20  # Brave Search answers at most 20 results a request


def page_key(url: str) -> str:
    """A result's stable key: its URL without the fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


class WebSource:
    name = "web"
    kind: SourceKind = "article"

    def search(self, query: str, *, limit: int, budget: RequestBudget, options: SearchOptions) -> list[SourceHit]:
        """Pages for query (asking for twice as many when options filter). One request; raises
        ServiceUnavailable naming the web search API."""
        limit = max(0, min(limit, settings.RESEARCH_SOURCE_MAX_RESULTS))
        if not query.strip() or limit == 0:
            return []
        wanted = min(limit * 2, BRAVE_MAX_COUNT) if filters_active(options) else limit
        budget.spend()
        results = web_search(
            query=" ".join(query.split()),
            count=max(wanted, limit),
            date_from=options.date_from,
            date_to=options.date_to,
        )
        hits = [
            SourceHit(
                adapter="web",
                kind="article",
                key=page_key(result.url),
                title=result.title[:300] or result.url[:300],
                url=result.url,
                snippet=result.snippet[:1000],
                published=result.published,
            )
            for result in results
            if urlsplit(result.url).scheme.lower() in ("http", "https")
        ]
        return keep(hits, options, limit=limit)

    def read(self, hit: SourceHit, *, budget: RequestBudget) -> SourceText:
        """The page's main text (capped by RESEARCH_SOURCE_MAX_CHARS), titled; the hit's URL becomes the
        page's final one after redirects (callers re-check it against excluded domains). One request;
        raises FetchRefused (SSRF rules, type, size), FetchFailed."""
        budget.spend()
        page = fetch(hit.url, timeout=settings.RESEARCH_SOURCE_TIMEOUT_SECONDS)
        text = main_text(page)
        if not text:
            raise FetchFailed("The page has no main text.", code="source_no_text")
        return SourceText(hit=replace(hit, url=page.url), text=capped(f"{hit.title}\n\n{text}"))
