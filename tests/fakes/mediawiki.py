"""A loopback MediaWiki action API at /w/api.php answering as Wikipedia does with format=json and
formatversion=2: `list=search` (srsearch, srlimit, srprop timestamp|snippet with searchmatch spans) and
`prop=extracts|info` (explaintext, pageids, inprop=url); unknown actions get MediaWiki's error object."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, urlsplit

from tests.fakes.http import FakeHTTPServer, RecordedRequest, Reply

JSON_TYPE = "application/json; charset=utf-8"


@dataclass(frozen=True)
class WikiPage:
    pageid: int
    title: str
    text: str  # the plain-text extract (sections separated by blank lines and their heading lines)
    timestamp: str = "2025-06-01T10:00:00Z"  # last edit


class FakeMediaWiki(FakeHTTPServer):
    def __init__(self, pages: list[WikiPage] | None = None) -> None:
        super().__init__()
        self.pages: list[WikiPage] = list(pages or [])

    @property
    def api_url(self) -> str:
        return f"{self.url}/w/api.php"

    def params(self) -> list[dict[str, str]]:
        return [{k: v[0] for k, v in parse_qs(urlsplit(r.path).query).items()} for r in self.requests]

    def handle(self, request: RecordedRequest) -> Reply:
        parts = urlsplit(request.path)
        if parts.path != "/w/api.php":
            return Reply(404, "Not Found", content_type="text/plain")
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if params.get("action") != "query":
            return self._error("badvalue", f'Unrecognized value for parameter "action": {params.get("action")}.')
        if params.get("list") == "search":
            return self._search(params)
        if "extracts" in params.get("prop", "").split("|"):
            return self._extracts(params)
        return Reply(200, {"batchcomplete": True}, content_type=JSON_TYPE)

    def _error(self, code: str, info: str) -> Reply:
        body = {"error": {"code": code, "info": info, "docref": "See /w/api.php for API usage."}, "servedby": "fake"}
        return Reply(200, body, headers={"MediaWiki-API-Error": code}, content_type=JSON_TYPE)

    def _search(self, params: dict[str, str]) -> Reply:
        if not params.get("srsearch"):
            return self._error("missingparam", 'The "srsearch" parameter must be set.')
        terms = [t.lower() for t in re.findall(r"\w+", params["srsearch"])]
        limit = int(params.get("srlimit", 10))
        found = [p for p in self.pages if any(t in f"{p.title} {p.text}".lower() for t in terms)]
        rows = []
        for page in found[:limit]:
            snippet = html.escape(page.text[:150])
            for term in terms:
                snippet = re.sub(rf"(?i)\b({re.escape(term)})\b", r'<span class="searchmatch">\1</span>', snippet)
            rows.append(
                {"ns": 0, "title": page.title, "pageid": page.pageid, "snippet": snippet, "timestamp": page.timestamp}
            )
        body = {
            "batchcomplete": True,
            "continue": {"sroffset": limit, "continue": "-||"},
            "query": {"searchinfo": {"totalhits": len(found)}, "search": rows},
        }
        return Reply(200, body, content_type=JSON_TYPE)

    def _extracts(self, params: dict[str, str]) -> Reply:
        out = []
        for raw in params.get("pageids", "").split("|"):
            page = next((p for p in self.pages if str(p.pageid) == raw), None)
            if page is None:
                out.append({"pageid": int(raw) if raw.isdigit() else 0, "missing": True})
                continue
            url = f"{self.url}/wiki/{quote(page.title.replace(' ', '_'))}"
            out.append(
                {
                    "pageid": page.pageid,
                    "ns": 0,
                    "title": page.title,
                    "contentmodel": "wikitext",
                    "pagelanguage": "en",
                    "touched": page.timestamp,
                    "lastrevid": page.pageid * 10,
                    "length": len(page.text),
                    "fullurl": url,
                    "editurl": f"{url}?action=edit",
                    "canonicalurl": url,
                    "extract": page.text,
                }
            )
        return Reply(200, {"batchcomplete": True, "query": {"pages": out}}, content_type=JSON_TYPE)
