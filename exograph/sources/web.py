"""Chat's engine `web`: search, fetch each result safely, extract its main text, keep the part that
matches the question. Items are evidence dicts (as chat's evidence adapter makes) with origin `web`
and the page's URL."""

from __future__ import annotations

import logging
from typing import Any

from exograph.core.snippets import snippet
from exograph.sources.extract import main_text
from exograph.sources.fetch import FetchFailed, FetchRefused, fetch
from exograph.sources.search import web_search

logger = logging.getLogger(__name__)

PASSAGE_CHARS = 1200


def web_evidence(*, question: str, count: int = 5) -> list[dict[str, Any]]:
    """Evidence from the web for question. Network calls; refused or failing pages are skipped.
    Raises ValidationError (no search configured), ServiceUnavailable (search API down)."""
    items: list[dict[str, Any]] = []
    for position, result in enumerate(web_search(query=question, count=count)):
        try:
            page = fetch(result.url)
        except (FetchRefused, FetchFailed) as exc:
            logger.info("web result %d skipped: %s", position, exc.code)
            continue
        text = main_text(page) or result.snippet
        if not text:
            continue
        items.append(
            {
                "kind": "passage",
                "text": snippet(text, question, limit=PASSAGE_CHARS),
                "origin": "web",
                "graph_id": "",
                "document_id": None,
                "source": result.title[:200],
                "url": page.url,
                "page": None,
                "chunk_id": None,
            }
        )
    return items
