"""Which source adapters a research session reads, by source kind and by what the operator configured."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from exograph.core.errors import ValidationError
from exograph.sources.base import SourceAdapter
from exograph.sources.local import LocalSource

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
