"""Source `wikipedia` (kind article): the MediaWiki action API (WIKIPEDIA_API_URL, e.g.
https://en.wikipedia.org/w/api.php). search = `action=query&list=search` (article namespace; a hit's
date is its last edit, the version read); read = `prop=extracts&explaintext=1&pageids=<id>` (plain text,
reference sections dropped) with `prop=info` for the canonical URL. One request each."""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from datetime import date
from typing import Any
from urllib.parse import quote, urlsplit

from django.conf import settings

from exograph.core.errors import ServiceUnavailable
from exograph.sources.base import (
    RequestBudget,
    SearchOptions,
    SourceBudgetExhausted,
    SourceHit,
    SourceKind,
    SourceText,
)
from exograph.sources.calls import broader_terms, capped, content_terms, source_get, source_unavailable
from exograph.sources.fetch import FetchFailed
from exograph.sources.filters import filters_active, keep

ACCEPT = ("application/json",)
SETTING = "WIKIPEDIA_API_URL"
MAX_TERMS = 12
# Trailing sections that hold lists of links and citations, not knowledge (English Wikipedia's names).
_TAIL_SECTIONS = frozenset({"see also", "references", "notes", "external links", "further reading", "bibliography"})
_TAG = re.compile(r"<[^>]+>")


def _malformed(detail: str) -> ServiceUnavailable:
    return source_unavailable(source="wikipedia", detail=detail, setting=SETTING)


def _payload(body: bytes) -> dict[str, Any]:
    """The reply's JSON object; raises ServiceUnavailable for a malformed reply or an API error."""
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _malformed("its reply is not JSON.") from exc
    if not isinstance(payload, dict):
        raise _malformed("its reply is not a JSON object.")
    error = payload.get("error")
    if error is not None:
        code = str(error.get("code", "")) if isinstance(error, dict) else ""
        info = str(error.get("info", "")) if isinstance(error, dict) else ""
        raise _malformed(f"it reported an error ({code[:60]}: {info[:200]}).")
    query = payload.get("query")
    if not isinstance(query, dict):
        raise _malformed("its reply has no query result.")
    return query


def _day(value: object) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def article_url(title: str, pageid: int) -> str:
    """The article's address on the configured wiki (/wiki/Title for Wikipedia-style paths)."""
    parts = urlsplit(settings.WIKIPEDIA_API_URL)
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.path.endswith("/w/api.php"):
        return f"{origin}/wiki/{quote(title.replace(' ', '_'), safe='')}"
    return f"{origin}{parts.path.removesuffix('api.php')}index.php?curid={pageid}"


def parse_search(body: bytes) -> list[SourceHit]:
    """The hits of a list=search reply (formatversion=2). Pure; raises ServiceUnavailable."""
    rows = _payload(body).get("search")
    if not isinstance(rows, list):
        raise _malformed("its reply has no search results.")
    hits: list[SourceHit] = []
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("pageid"), int) or not row.get("title"):
            continue
        title = str(row["title"])
        snippet = " ".join(html.unescape(_TAG.sub("", str(row.get("snippet") or ""))).split())
        hits.append(
            SourceHit(
                adapter="wikipedia",
                kind="article",
                key=str(row["pageid"]),
                title=title,
                url=article_url(title, row["pageid"]),
                snippet=snippet,
                published=_day(row.get("timestamp")),
            )
        )
    return hits


def plain_text(extract: str) -> str:
    """An explaintext extract tidied: whitespace collapsed per line, trailing link/reference sections cut."""
    lines: list[str] = []
    for raw in extract.splitlines():
        line = " ".join(raw.split())
        if line.lower().strip("= ") in _TAIL_SECTIONS:
            break
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip()


class WikipediaSource:
    name = "wikipedia"
    kind: SourceKind = "article"

    def _query(self, params: dict[str, str | int], budget: RequestBudget) -> bytes:
        base: dict[str, str | int] = {"action": "query", "format": "json", "formatversion": 2, "utf8": 1}
        page = source_get(
            source="wikipedia",
            setting=SETTING,
            url=settings.WIKIPEDIA_API_URL,
            params={**base, **params},
            accept=ACCEPT,
            budget=budget,
        )
        return page.body

    def search(self, query: str, *, limit: int, budget: RequestBudget, options: SearchOptions) -> list[SourceHit]:
        """Articles for the query's content words (asking for twice as many when options filter). One
        request, and one more with the three longest words when all of them together find nothing."""
        terms = content_terms(query, limit=MAX_TERMS)
        limit = max(0, min(limit, settings.RESEARCH_SOURCE_MAX_RESULTS))
        if not terms or limit == 0:
            return []
        wanted = min(limit * 2, settings.RESEARCH_SOURCE_MAX_RESULTS) if filters_active(options) else limit
        found = parse_search(self._query(self._params(terms, max(wanted, limit)), budget))
        broader = broader_terms(terms)
        if not found and broader:
            try:
                found = parse_search(self._query(self._params(broader, max(wanted, limit)), budget))
            except SourceBudgetExhausted:
                return []
        return keep(found, options, limit=limit)

    @staticmethod
    def _params(terms: list[str], count: int) -> dict[str, str | int]:
        return {
            "list": "search",
            "srsearch": " ".join(terms)[:300],
            "srnamespace": 0,
            "srlimit": count,
            "srprop": "timestamp|snippet",
        }

    def read(self, hit: SourceHit, *, budget: RequestBudget) -> SourceText:
        """The article's plain text (capped by RESEARCH_SOURCE_MAX_CHARS), titled. One request."""
        if not hit.key.isdigit():
            raise FetchFailed("A Wikipedia hit's key is its page id.", code="source_bad_key")
        params: dict[str, str | int] = {
            "prop": "extracts|info",
            "explaintext": 1,
            "exsectionformat": "plain",
            "inprop": "url",
            "pageids": hit.key,
        }
        try:
            pages = _payload(self._query(params, budget)).get("pages")
        except ServiceUnavailable as exc:
            raise FetchFailed(exc.message, code="source_unavailable") from exc
        page = pages[0] if isinstance(pages, list) and pages and isinstance(pages[0], dict) else None
        if page is None or page.get("missing") or page.get("invalid"):
            raise FetchFailed(f"Wikipedia has no page {hit.key}.", code="source_missing")
        text = plain_text(str(page.get("extract") or ""))
        if not text:
            raise FetchFailed(f"Wikipedia page {hit.key} has no text.", code="source_no_text")
        title = str(page.get("title") or hit.title)
        url = str(page.get("fullurl") or hit.url)
        read = replace(hit, title=title, url=url)
        return SourceText(hit=read, text=capped(f"{title}\n\n{text}"))
