"""The one interface research reads outside knowledge through: source adapters (`arxiv`, `wikipedia`,
`web`, `local`) that search for hits and read a hit's main text, each under a per-session request
budget. Adapters do network calls only through `exograph.sources.fetch` (the SSRF-safe fetcher)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal, Protocol

from exograph.core.errors import ExoGraphError

SourceKind = Literal["paper", "article", "local"]


class SourceBudgetExhausted(ExoGraphError):
    """The session's request budget for outside sources is spent: stop searching and reading."""

    status, code = 429, "source_budget_exhausted"


@dataclass
class RequestBudget:
    """How many outside requests a research session may still make. Not thread-safe; one per session run."""

    remaining: int

    def spend(self, n: int = 1) -> None:
        """Take n requests from the budget. Raises SourceBudgetExhausted when fewer are left."""
        if n > self.remaining:
            raise SourceBudgetExhausted(
                "This research session has used all its outside requests.",
                hint="Start a new session or raise RESEARCH_MAX_SOURCE_REQUESTS.",
            )
        self.remaining -= n


@dataclass(frozen=True)
class SearchOptions:
    """What a research session asked for: dates (inclusive) and domains it does not want."""

    date_from: date | None = None
    date_to: date | None = None
    excluded_domains: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceHit:
    """One search result. `key` is stable across runs (arXiv id, Wikipedia page id, URL, document id) so a
    watch topic can skip what it has read before."""

    adapter: str  # arxiv | wikipedia | web | local
    kind: SourceKind  # paper | article | local
    key: str
    title: str
    url: str  # empty for local hits without a URL
    snippet: str = ""
    published: date | None = None
    authors: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class SourceText:
    """A hit read: its main text (plain text, capped by the adapter), ready for plain-text ingest."""

    hit: SourceHit
    text: str


class SourceAdapter(Protocol):
    name: str  # arxiv | wikipedia | web | local
    kind: SourceKind

    def search(self, query: str, *, limit: int, budget: RequestBudget, options: SearchOptions) -> list[SourceHit]:
        """Hits for query, at most limit, filtered by options. Raises SourceBudgetExhausted,
        ServiceUnavailable (the source is down: the caller skips this adapter)."""
        ...

    def read(self, hit: SourceHit, *, budget: RequestBudget) -> SourceText:
        """The hit's main text. Raises SourceBudgetExhausted, FetchRefused, FetchFailed."""
        ...
