"""Which adapters a session reads, by kind and by what is configured."""

from __future__ import annotations

import pytest

from exograph.core.errors import ValidationError
from research.sources import adapters_for


def names(kinds: list[str]) -> list[str]:
    return [adapter.name for adapter in adapters_for(kinds)]


def test_network_kinds_map_to_the_configured_adapters(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARXIV_API_URL = "https://export.arxiv.org/api/query"
    settings.WIKIPEDIA_API_URL = "https://en.wikipedia.org/w/api.php"
    settings.WEB_SEARCH_URL = "https://api.search.brave.com/res/v1/web/search"
    assert names(["paper"]) == ["arxiv"]
    assert names(["article"]) == ["wikipedia", "web"]
    assert names(["article", "paper", "paper"]) == ["arxiv", "wikipedia", "web"]
    assert names(["Papers", "articles"]) == ["arxiv", "wikipedia", "web"]
    assert [(a.name, a.kind) for a in adapters_for(["paper", "article"])] == [
        ("arxiv", "paper"),
        ("wikipedia", "article"),
        ("web", "article"),
    ]


def test_an_unconfigured_source_is_left_out(settings) -> None:  # type: ignore[no-untyped-def]
    settings.ARXIV_API_URL = "https://export.arxiv.org/api/query"
    settings.WEB_SEARCH_URL = "https://api.search.brave.com/res/v1/web/search"
    assert names(["paper", "article"]) == ["arxiv", "web"]


def test_unknown_kinds_are_a_validation_error_listing_the_allowed_ones() -> None:
    with pytest.raises(ValidationError) as caught:
        adapters_for(["paper", "video"])
    assert caught.value.code == "invalid_source_kind" and "'video'" in caught.value.message
    assert "paper, article, local" in caught.value.hint
