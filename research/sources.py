"""The sources a research session reads: the outside ones (exograph.sources: arXiv, Wikipedia, the web) and `local`,
the platform's own knowledge, no network. `local` lives here, not in exograph.sources, because it reads graphs and
documents (sources knows nothing of either).

`local` is the default when no network source is configured, so a research session completes on a laptop
offline. What it reads follows the session's scope, one rule:

- a **world** session reads the World Graph only (world-scope documents). Its findings and the sources it reads
  are published to the shared World Graph, so a private text read there would leak: it never reads one.
- a **private** session reads the World Graph and the session owner's own private graphs (the graphs a private
  search of that account reads, graphs.selectors.search_graphs_for_user), never another account's.

Search is graphs.retrieval's `retrieve` over those graphs in passages mode (the one retrieval module); a hit is
one document, and reading it returns that document's passages in order from the graph store that holds them (the
World Graph for world-scope documents, the document's own graph for a private one). A read re-checks the rule.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

from django.conf import settings

from exograph.accounts.models import User
from exograph.core.errors import Conflict, NotFound, ValidationError
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.models import WORLD_GRAPH_ID, Graph
from exograph.sources.base import RequestBudget, SearchOptions, SourceAdapter, SourceHit, SourceKind, SourceText

logger = logging.getLogger(__name__)

KEY_PREFIX = "local:"
SNIPPET_CHARS = 4000


def local_key(document_id: object) -> str:
    """The source key of a `local` hit: `local:<document id>`."""
    return f"{KEY_PREFIX}{document_id}"


def document_uuid(key: str) -> uuid.UUID | None:
    """The document id a `local:<uuid>` source key (or a bare id) names; None when it names no UUID (another
    source's key, or a passage written to the World Graph without a Document row, e.g. a seed)."""
    try:
        return uuid.UUID(str(key).removeprefix(KEY_PREFIX))
    except ValueError:
        return None


def document_uuids(keys: Iterable[str]) -> list[uuid.UUID]:
    """The document ids the keys name, in order, skipping those that name none (document_uuid)."""
    return [found for key in keys if (found := document_uuid(key)) is not None]


def _document_meta(document_ids: list[str], *, private_graph_ids: set[str]) -> dict[str, dict[str, Any]]:
    """Name, URL, date and graph of the Document rows behind the hits: world-scope ones, and private ones only in
    private_graph_ids (the reader's own private graphs; empty for a world session)."""
    from django.db.models import Q

    from exograph.documents.models import Document

    valid = document_uuids(document_ids)  # one written to the World Graph without a Document row has no metadata
    readable = Q(graph__scope=Scope.WORLD) | Q(graph_id__in=private_graph_ids, graph__scope=Scope.PRIVATE)
    rows = Document.objects.filter(readable, id__in=valid, deleted_at__isnull=True).values(
        "id", "title", "filename", "source_url", "published", "graph_id", "graph__scope"
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
    """Search and read the platform's own knowledge for one account: the World Graph, and in a private session the
    account's own private graphs too (the module docstring's rule). Its reads are the account's own retrieve."""

    name = "local"
    kind: SourceKind = "local"

    def __init__(self, *, actor: User | None = None, scope: Scope = Scope.WORLD, max_chars: int | None = None) -> None:
        self.actor = actor
        # Private documents are read only for a private session with an account: a world one publishes what it reads.
        self.private = Scope(scope) == Scope.PRIVATE and actor is not None and actor.pk is not None
        self.max_chars = max_chars or int(settings.RESEARCH_SOURCE_MAX_CHARS)

    def _world(self) -> Graph | None:
        return Graph.objects.filter(id=WORLD_GRAPH_ID).first()

    def _private_graphs(self) -> list[Graph]:
        """The actor's own private graphs holding documents (none for a world session), those this server's
        embedder can search (a graph built with another one is left out, not the whole search)."""
        from exograph.graphs.selectors import embedder_check, search_graphs_for_user

        if not self.private or self.actor is None:
            return []
        graphs = []
        for graph in search_graphs_for_user(user=self.actor, scope=Scope.PRIVATE, graph_id=None):
            if graph.document_count == 0:
                continue
            try:
                embedder_check(graph=graph)
            except Conflict:
                logger.info("research: local source skips graph %s (built with another embedder)", graph.id)
                continue
            graphs.append(graph)
        return graphs

    def search(self, query: str, *, limit: int, budget: RequestBudget, options: SearchOptions) -> list[SourceHit]:
        from exograph.graphs.retrieval import retrieve

        world = self._world()
        private = self._private_graphs()
        graphs = ([world] if world is not None and world.document_count > 0 else []) + private
        if not graphs:
            return []
        budget.spend()
        # The World Graph is world-scope: any account may read it, so an account-less reader is enough
        # when no actor is given (retrieve uses the actor only for access checks and the origin label).
        result = retrieve(
            actor=self.actor or User(), graphs=graphs, question=query, mode="passages", top_k=min(100, limit * 4)
        )
        private_ids = {graph.id for graph in private}
        passages: dict[str, list[str]] = {}
        first: dict[str, Any] = {}
        for item in result.items:
            if item.kind != "passage" or not item.document_id:
                continue
            passages.setdefault(item.document_id, []).append(item.text)
            first.setdefault(item.document_id, item)
        meta = _document_meta(list(first), private_graph_ids=private_ids)
        hits: list[SourceHit] = []
        for document_id, item in first.items():
            row = meta.get(document_id, {})
            if item.graph_id in private_ids and row.get("graph_id") != item.graph_id:
                continue  # a private passage is read only with its own Document row in that graph
            published = row.get("published")
            url = str(row.get("source_url") or item.url or "")
            if not _in_range(published, options) or _domain_excluded(url, options):
                continue
            hits.append(
                SourceHit(
                    adapter=self.name,
                    kind=self.kind,
                    key=local_key(document_id),
                    title=str(row.get("title") or row.get("filename") or item.source or document_id)[:500],
                    url=url,
                    snippet="\n\n".join(passages[document_id])[:SNIPPET_CHARS],
                    published=published,
                )
            )
            if len(hits) >= limit:
                break
        return hits

    def _store_of(self, document_id: str) -> str:
        """The graph store holding the document's passages: the World Graph's for a world-scope document (or one
        written there without a row), its own graph's for the actor's private document in a private session.
        Raises NotFound for any other document (another account's, deleted, or private in a world session)."""
        from exograph.documents.models import Document

        named = document_uuid(document_id)  # None: written to the World Graph without a Document row (a seed)
        row = Document.objects.filter(id=named).select_related("graph").first() if named else None
        if row is None:
            return Graph.objects.get(id=WORLD_GRAPH_ID).store_name  # the row: it knows the World Graph's server
        if row.deleted_at is None and row.graph.scope == Scope.WORLD:
            return Graph.objects.get(id=WORLD_GRAPH_ID).store_name
        if self.private and self.actor is not None and row.deleted_at is None and row.graph.owner_id == self.actor.pk:
            return row.graph.store_name
        raise NotFound(
            "This source is not readable by the session.", code="source_not_found", hint="It is left out of the report."
        )

    def read(self, hit: SourceHit, *, budget: RequestBudget) -> SourceText:
        document_id = hit.key.removeprefix(KEY_PREFIX)
        store_name = self._store_of(document_id)
        budget.spend()
        rows = store.ro_query(
            store_name,
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


def adapters_for(kinds: Sequence[str], *, actor: User | None = None, scope: Scope = Scope.WORLD) -> list[SourceAdapter]:
    """The adapters for kinds (paper | article | local; none given = all): arxiv for papers when
    ARXIV_API_URL is set, wikipedia (WIKIPEDIA_API_URL) and web (WEB_SEARCH_URL) for articles, local (the World
    Graph; with a private scope also actor's own private graphs, LocalSource) for local. With no network adapter
    among them the result is local only, so a session completes with no network. Raises ValidationError for an
    unknown kind."""
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
        adapters.append(LocalSource(actor=actor, scope=scope))
    return adapters
