"""The sources a research session reads: the outside ones (exograph.sources: arXiv, Wikipedia, the web) and `local`,
the platform's own World Graph and world-scope documents, no network. `local` lives here, not in exograph.sources,
because it reads graphs and documents (sources knows nothing of either).

`local` is the default when no network source is configured, so a research session completes on a laptop
offline. Search is graphs.retrieval's `retrieve` over the World Graph in passages mode (the one
retrieval module); a hit is one world document, and reading it returns that document's passages in
order from the World Graph store (world-scope documents keep their text there once processed).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date
from typing import Any

from django.conf import settings

from exograph.accounts.models import User
from exograph.core.errors import ValidationError
from exograph.graphs import store
from exograph.graphs.models import WORLD_GRAPH_ID, Graph
from exograph.sources.base import RequestBudget, SearchOptions, SourceAdapter, SourceHit, SourceKind, SourceText

logger = logging.getLogger(__name__)

KEY_PREFIX = "local:"
SNIPPET_CHARS = 4000


def _document_meta(document_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Title, URL and date of the world-scope Document rows behind the hits (uploads and text ingests)."""
    import uuid

    from exograph.documents.models import Document

    valid = []
    for value in document_ids:
        try:
            valid.append(uuid.UUID(str(value)))
        except ValueError:
            continue  # written to the World Graph without a Document row (e.g. a seed); no metadata
    rows = Document.objects.filter(id__in=valid, deleted_at__isnull=True, graph__scope="world").values(
        "id", "title", "source_url", "published"
    )
    return {str(row["id"]): dict(row) for row in rows}


def _in_range(published: date | None, options: SearchOptions) -> bool:
    if published is None:
        return True  # undated platform knowledge is kept; dated sources must fall inside the range
    if options.date_from is not None and published < options.date_from:
        return False
    return not (options.date_to is not None and published > options.date_to)


def _domain_excluded(url: str, options: SearchOptions) -> bool:
    from urllib.parse import urlsplit

    if not url or not options.excluded_domains:
        return False
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return any(host == d or host.endswith("." + d) for d in options.excluded_domains)


class LocalSource:
    """Search and read the World Graph for one account (its reads are the account's own retrieve)."""

    name = "local"
    kind: SourceKind = "local"

    def __init__(self, *, actor: User | None = None, max_chars: int | None = None) -> None:
        self.actor = actor
        self.max_chars = max_chars or int(settings.RESEARCH_SOURCE_MAX_CHARS)

    def _world(self) -> Graph | None:
        return Graph.objects.filter(id=WORLD_GRAPH_ID).first()

    def search(self, query: str, *, limit: int, budget: RequestBudget, options: SearchOptions) -> list[SourceHit]:
        from exograph.graphs.retrieval import retrieve

        world = self._world()
        if world is None or world.document_count == 0:
            return []
        budget.spend()
        # The World Graph is world-scope: any account may read it, so an account-less reader is enough
        # when no actor is given (retrieve uses the actor only for access checks and the origin label).
        result = retrieve(
            actor=self.actor or User(), graphs=[world], question=query, mode="passages", top_k=min(100, limit * 4)
        )
        passages: dict[str, list[str]] = {}
        first: dict[str, Any] = {}
        for item in result.items:
            if item.kind != "passage" or not item.document_id:
                continue
            passages.setdefault(item.document_id, []).append(item.text)
            first.setdefault(item.document_id, item)
        meta = _document_meta(list(first))
        hits: list[SourceHit] = []
        for document_id, item in first.items():
            row = meta.get(document_id, {})
            published = row.get("published")
            url = str(row.get("source_url") or item.url or "")
            if not _in_range(published, options) or _domain_excluded(url, options):
                continue
            hits.append(
                SourceHit(
                    adapter=self.name,
                    kind=self.kind,
                    key=KEY_PREFIX + document_id,
                    title=str(row.get("title") or item.source or document_id)[:500],
                    url=url,
                    snippet="\n\n".join(passages[document_id])[:SNIPPET_CHARS],
                    published=published,
                )
            )
            if len(hits) >= limit:
                break
        return hits

    def read(self, hit: SourceHit, *, budget: RequestBudget) -> SourceText:
        document_id = hit.key.removeprefix(KEY_PREFIX)
        budget.spend()
        rows = store.ro_query(
            Graph.objects.get(id=WORLD_GRAPH_ID).store_name,  # the row: it knows the World Graph's server
            "MATCH (c:Chunk {document_id: $doc}) RETURN c.ordinal, c.text ORDER BY c.ordinal",
            {"doc": document_id},
        )
        text = "\n\n".join(str(row[1] or "") for row in rows).strip() or hit.snippet
        return SourceText(hit=hit, text=text[: self.max_chars])


# --- which adapters a session reads -------------------------------------------------------------------

KINDS = ("paper", "article", "local")
_ALIASES = {"papers": "paper", "articles": "article"}


def kinds_available() -> dict[str, bool]:
    """Which source kinds this server can read, by the same settings adapters_for reads: papers need ARXIV_API_URL,
    articles WIKIPEDIA_API_URL or a web search (WEB_SEARCH_URL, as the chat's web engine); local always works. The
    web research form ticks and offers only these (the chat page marks its web engine the same way)."""
    from exograph.sources.search import web_search_configured

    return {
        "paper": bool(settings.ARXIV_API_URL),
        "article": bool(settings.WIKIPEDIA_API_URL) or web_search_configured(),
        "local": True,
    }


def adapters_for(kinds: Sequence[str]) -> list[SourceAdapter]:
    """The adapters for kinds (paper | article | local; none given = all): arxiv for papers when
    ARXIV_API_URL is set, wikipedia (WIKIPEDIA_API_URL) and web (WEB_SEARCH_URL) for articles, local (the
    platform's world graph) for local. With no network adapter among them the result is local only, so a
    session completes with no network. Raises ValidationError for an unknown kind."""
    wanted = {_ALIASES.get(kind.strip().lower(), kind.strip().lower()) for kind in kinds} or set(KINDS)
    unknown = sorted(wanted - set(KINDS))
    if unknown:
        raise ValidationError(
            f"Unknown source kind {unknown[0][:40]!r}.",
            code="invalid_source_kind",
            hint=f"Use any of: {', '.join(KINDS)}.",
        )
    adapters: list[SourceAdapter] = []
    if "paper" in wanted and settings.ARXIV_API_URL:
        from exograph.sources.arxiv import ArxivSource

        adapters.append(ArxivSource())
    if "article" in wanted and settings.WIKIPEDIA_API_URL:
        from exograph.sources.wikipedia import WikipediaSource

        adapters.append(WikipediaSource())
    if "article" in wanted and settings.WEB_SEARCH_URL:
        from exograph.sources.webpages import WebSource

        adapters.append(WebSource())
    if "local" in wanted or not adapters:
        adapters.append(LocalSource())
    return adapters
