"""Main-text extraction from fetched pages with trafilatura (boilerplate, navigation and ads removed)."""

from __future__ import annotations

from exograph.sources.fetch import FetchedPage


def main_text(page: FetchedPage) -> str:
    """The page's main text ('' when none is found). Pure (CPU only)."""
    raw = page.body.decode("utf-8", errors="replace")
    if page.content_type == "text/plain":
        return " ".join(raw.split())
    import trafilatura

    text = trafilatura.extract(raw, url=page.url, include_comments=False, include_tables=False, favor_precision=True)
    return " ".join((text or "").split())
