"""A loopback arXiv API: GET /api/query answers Atom 1.0 feeds as export.arxiv.org does (search_query with
`all:` terms ANDed and a `submittedDate:[... TO ...]` range, id_list, start, max_results; a malformed
id_list is a 400 with arXiv's error feed)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

from tests.fakes.http import FakeHTTPServer, RecordedRequest, Reply

ATOM_TYPE = "application/atom+xml; charset=UTF-8"
_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$")


@dataclass(frozen=True)
class Paper:
    arxiv_id: str  # e.g. 2403.01234
    title: str
    summary: str
    authors: tuple[str, ...] = ("A. Author",)
    published: str = "2024-03-02T17:59:59Z"
    categories: tuple[str, ...] = field(default=("cs.CL",))


def entry_xml(paper: Paper) -> str:
    abs_url = f"http://arxiv.org/abs/{paper.arxiv_id}v1"
    authors = "".join(f"<author><name>{escape(name)}</name></author>" for name in paper.authors)
    cats = "".join(f'<category term="{c}" scheme="http://arxiv.org/schemas/atom"/>' for c in paper.categories)
    return f"""  <entry>
    <id>{abs_url}</id>
    <updated>{paper.published}</updated>
    <published>{paper.published}</published>
    <title>{escape(paper.title)}</title>
    <summary>  {escape(paper.summary)}
</summary>
    {authors}
    <arxiv:comment xmlns:arxiv="http://arxiv.org/schemas/atom">12 pages, 3 figures</arxiv:comment>
    <link href="{abs_url}" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/{paper.arxiv_id}v1" rel="related" type="application/pdf"/>
    <arxiv:primary_category xmlns:arxiv="http://arxiv.org/schemas/atom" term="{paper.categories[0]}"
      scheme="http://arxiv.org/schemas/atom"/>
    {cats}
  </entry>
"""


def feed_xml(entries: list[str], *, query: str = "", total: int | None = None) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <link href="http://arxiv.org/api/query?{escape(query)}" rel="self" type="application/atom+xml"/>
  <title type="html">ArXiv Query: {escape(query)}</title>
  <id>http://arxiv.org/api/k2bqDJeRL0O8fmBn5sMC1qUYaGU</id>
  <updated>2026-12-01T00:00:00-05:00</updated>
  <opensearch:totalResults xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{
        len(entries) if total is None else total
    }</opensearch:totalResults>
  <opensearch:startIndex xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">0</opensearch:startIndex>
  <opensearch:itemsPerPage xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">{
        len(entries)
    }</opensearch:itemsPerPage>
{"".join(entries)}</feed>
"""


def error_feed_xml(message: str) -> str:
    anchor = re.sub(r"\W+", "_", message)
    return feed_xml(
        [
            f"""  <entry>
    <id>http://arxiv.org/api/errors#{anchor}</id>
    <title>Error</title>
    <summary>{escape(message)}</summary>
    <updated>2026-12-01T00:00:00-05:00</updated>
    <link href="http://arxiv.org/api/errors#{anchor}" rel="alternate" type="text/html"/>
    <author><name>arXiv api core</name></author>
  </entry>
"""
        ]
    )


class FakeArxiv(FakeHTTPServer):
    """`papers` is the corpus; `filtering=False` answers every paper whatever the query (to test that the
    adapter filters on its own). `times` holds each request's monotonic arrival time."""

    def __init__(self, papers: list[Paper] | None = None) -> None:
        super().__init__()
        self.papers: list[Paper] = list(papers or [])
        self.filtering = True
        self.times: list[float] = []

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/query"

    def queries(self) -> list[dict[str, list[str]]]:
        return [parse_qs(urlsplit(r.path).query) for r in self.requests]

    def handle(self, request: RecordedRequest) -> Reply:
        self.times.append(time.monotonic())
        parts = urlsplit(request.path)
        if parts.path != "/api/query":
            return Reply(404, "Not Found", content_type="text/plain")
        params = {k: v[0] for k, v in parse_qs(parts.query).items()}
        ids = [i for i in params.get("id_list", "").split(",") if i]
        bad = [i for i in ids if not _ID.match(i)]
        if bad:
            return Reply(400, error_feed_xml(f"incorrect id format for {bad[0]}"), content_type=ATOM_TYPE)
        chosen = self._select(params.get("search_query", ""), ids)
        start, count = int(params.get("start", 0)), int(params.get("max_results", 10))
        page = chosen[start : start + count]
        return Reply(
            200, feed_xml([entry_xml(p) for p in page], query=parts.query, total=len(chosen)), content_type=ATOM_TYPE
        )

    def _select(self, search_query: str, ids: list[str]) -> list[Paper]:
        if not self.filtering:
            return list(self.papers)
        if ids:
            return [p for p in self.papers if p.arxiv_id in ids]
        terms = re.findall(r"all:(\S+)", search_query)
        dates = re.search(r"submittedDate:\[(\d{8})\d{4} TO (\d{8})\d{4}\]", search_query)
        chosen = []
        for paper in self.papers:
            words = set(re.findall(r"\w+", f"{paper.title} {paper.summary}".lower()))
            if not all(term.lower() in words for term in terms):
                continue
            day = paper.published[:10].replace("-", "")
            if dates and not (dates.group(1) <= day <= dates.group(2)):
                continue
            chosen.append(paper)
        return chosen
