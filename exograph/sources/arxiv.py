"""Source `arxiv` (kind paper): the arXiv Atom API (ARXIV_API_URL, e.g. https://export.arxiv.org/api/query).

search = `search_query=all:term AND all:term ...` (plus `submittedDate:[... TO ...]` for a date range),
parsed with defusedxml (no entity expansion, no external references); read = the entry's title, authors,
date and abstract, taken from the search reply (no request), or from `id_list=<id>` for a hit known only
by its key. Requests are spaced by ARXIV_MIN_INTERVAL_SECONDS (arXiv's terms: one every 3 seconds)."""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import replace
from datetime import date
from xml.etree.ElementTree import Element, ParseError

import defusedxml
import defusedxml.ElementTree as SafeET
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
from exograph.sources.filters import keep

logger = logging.getLogger(__name__)

ATOM = "{http://www.w3.org/2005/Atom}"
ACCEPT = ("application/atom+xml", "application/xml", "text/xml")
SETTING = "ARXIV_API_URL"
MAX_TERMS = 8
_KEY = re.compile(r"^(\d{4}\.\d{4,5}|[a-z][a-z.-]*/\d{7})$", re.IGNORECASE)  # new-style or archive/number
_ABS_ID = re.compile(r"arxiv\.org/abs/(?P<id>[^?#\s]+?)(?:v\d+)?$", re.IGNORECASE)

_turn_lock = threading.Lock()
_last_request = 0.0


def _wait_turn() -> None:
    """Space this process's arXiv requests by ARXIV_MIN_INTERVAL_SECONDS (one at a time)."""
    global _last_request
    with _turn_lock:
        gap = settings.ARXIV_MIN_INTERVAL_SECONDS - (time.monotonic() - _last_request)
        if gap > 0:
            time.sleep(gap)
        _last_request = time.monotonic()


def search_query(query: str, options: SearchOptions) -> str:
    """The arXiv search_query for a free-text query: its content words ANDed over all fields, plus the
    submission-date range. Only letters and digits reach arXiv's query syntax. '' when no word is left."""
    return _expression(content_terms(query, limit=MAX_TERMS), options)


def _expression(terms: list[str], options: SearchOptions) -> str:
    if not terms:
        return ""
    expression = " AND ".join(f"all:{term}" for term in terms)
    if options.date_from or options.date_to:
        start = (options.date_from or date(1991, 1, 1)).strftime("%Y%m%d")
        end = (options.date_to or date(9999, 12, 31)).strftime("%Y%m%d")
        expression += f" AND submittedDate:[{start}0000 TO {end}2359]"
    return expression


def _text(element: Element, tag: str) -> str:
    found = element.find(tag)
    return " ".join((found.text or "").split()) if found is not None else ""


def _published(value: str) -> date | None:
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def _malformed(detail: str) -> ServiceUnavailable:
    return source_unavailable(source="arxiv", detail=detail, setting=SETTING)


def parse_feed(body: bytes) -> list[SourceHit]:
    """The hits of an arXiv Atom feed (the abstract as snippet). Pure; raises ServiceUnavailable when the
    reply is not an Atom feed or reports an API error."""
    try:
        root = SafeET.fromstring(body)
    except (ParseError, defusedxml.DefusedXmlException) as exc:
        raise _malformed("its reply is not a readable Atom feed.") from exc
    if root.tag != f"{ATOM}feed":
        raise _malformed("its reply is not an Atom feed.")
    hits: list[SourceHit] = []
    for entry in root.findall(f"{ATOM}entry"):
        entry_id = _text(entry, f"{ATOM}id")
        if "/api/errors" in entry_id:  # arXiv reports a bad query as a feed with one error entry
            raise _malformed(f"it reported an error ({_text(entry, f'{ATOM}summary')[:200]}).")
        match = _ABS_ID.search(entry_id)
        title = _text(entry, f"{ATOM}title")
        if match is None or not title:
            logger.info("arxiv entry without an id or title skipped")
            continue
        url = entry_id
        for link in entry.findall(f"{ATOM}link"):
            if link.get("rel") == "alternate" and link.get("href"):
                url = str(link.get("href"))
                break
        url = re.sub(r"^http://(export\.)?arxiv\.org/", "https://arxiv.org/", url)
        authors = tuple(
            name for name in (_text(author, f"{ATOM}name") for author in entry.findall(f"{ATOM}author")) if name
        )
        hits.append(
            SourceHit(
                adapter="arxiv",
                kind="paper",
                key=match.group("id"),
                title=title,
                url=url,
                snippet=capped(_text(entry, f"{ATOM}summary")),
                published=_published(_text(entry, f"{ATOM}published")),
                authors=authors,
            )
        )
    return hits


def paper_text(hit: SourceHit) -> str:
    """What a paper hit reads as: title, authors, date, id and abstract (the abstract is the snippet)."""
    lines = [hit.title, ""]
    if hit.authors:
        lines.append(f"Authors: {', '.join(hit.authors)}")
    if hit.published:
        lines.append(f"Published: {hit.published.isoformat()}")
    lines += [f"arXiv: {hit.key}", "", hit.snippet]
    return capped("\n".join(lines).strip())


class ArxivSource:
    name = "arxiv"
    kind: SourceKind = "paper"

    def _get(self, params: dict[str, str | int], budget: RequestBudget) -> list[SourceHit]:
        _wait_turn()
        page = source_get(
            source="arxiv",
            setting=SETTING,
            url=settings.ARXIV_API_URL,
            params=params,
            accept=ACCEPT,
            budget=budget,
        )
        return parse_feed(page.body)

    def search(self, query: str, *, limit: int, budget: RequestBudget, options: SearchOptions) -> list[SourceHit]:
        """The most relevant papers for query (submitted within the date range when one is set). One
        request, and one more with the query's three longest words when all of them together find nothing."""
        terms = content_terms(query, limit=MAX_TERMS)
        limit = max(0, min(limit, settings.RESEARCH_SOURCE_MAX_RESULTS))
        if not terms or limit == 0:
            return []
        found = self._get(self._params(terms, options, limit), budget)
        broader = broader_terms(terms)
        if not found and broader:
            try:
                found = self._get(self._params(broader, options, limit), budget)
            except SourceBudgetExhausted:
                return []
        return keep(found, options, limit=limit)

    @staticmethod
    def _params(terms: list[str], options: SearchOptions, limit: int) -> dict[str, str | int]:
        return {
            "search_query": _expression(terms, options),
            "start": 0,
            "max_results": limit,
            "sortBy": "relevance",
            "sortOrder": "descending",
        }

    def read(self, hit: SourceHit, *, budget: RequestBudget) -> SourceText:
        """The paper's abstract with its title and authors; a request only when the hit carries no abstract."""
        if hit.snippet:
            return SourceText(hit=hit, text=paper_text(hit))
        if not _KEY.match(hit.key):
            raise FetchFailed("An arXiv hit's key is its arXiv id (e.g. 2403.01234).", code="source_bad_key")
        try:
            found = self._get({"id_list": hit.key, "start": 0, "max_results": 1}, budget)
        except ServiceUnavailable as exc:
            raise FetchFailed(exc.message, code="source_unavailable") from exc
        if not found or not found[0].snippet:
            raise FetchFailed(f"arXiv has no abstract for {hit.key[:60]}.", code="source_no_text")
        full = replace(hit, title=found[0].title, url=found[0].url, snippet=found[0].snippet)
        full = replace(full, published=hit.published or found[0].published, authors=hit.authors or found[0].authors)
        return SourceText(hit=full, text=paper_text(full))
