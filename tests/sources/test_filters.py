"""A session's options: excluded domains (with subdomains) and date ranges, normalised and applied."""

from __future__ import annotations

from datetime import date

import pytest

from exograph.core.errors import ValidationError
from exograph.sources.base import SearchOptions, SourceHit
from exograph.sources.filters import (
    MAX_EXCLUDED_DOMAINS,
    domain_excluded,
    hit_allowed,
    keep,
    normalize_domain,
    search_options,
)


@pytest.mark.parametrize(
    ("value", "domain"),
    [
        ("example.com", "example.com"),
        (" Example.COM ", "example.com"),
        ("*.example.com", "example.com"),
        (".example.com.", "example.com"),
        ("www.example.com", "example.com"),
        ("https://www.example.com/path?q=1", "example.com"),
        ("blog.example.co.uk:8443", "blog.example.co.uk"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("de", "de"),
    ],
)
def test_domains_are_normalised(value: str, domain: str) -> None:
    assert normalize_domain(value) == domain


@pytest.mark.parametrize(
    "value", ["", "   ", "*", "exa mple.com", "-bad.com", "a..b", "http://", "x" * 64 + ".com", "ex_ample.com"]
)
def test_bad_domains_are_a_validation_error_naming_the_value(value: str) -> None:
    with pytest.raises(ValidationError) as caught:
        normalize_domain(value)
    assert caught.value.code == "invalid_domain" and caught.value.status == 400 and "example.com" in caught.value.hint


def test_search_options_validate_the_range_and_the_domain_list() -> None:
    options = search_options(date_from=date(2024, 1, 1), excluded_domains=["Example.com", "www.example.com", "b.org"])
    assert options == SearchOptions(date_from=date(2024, 1, 1), excluded_domains=("example.com", "b.org"))
    with pytest.raises(ValidationError) as caught:
        search_options(date_from=date(2024, 2, 1), date_to=date(2024, 1, 1))
    assert caught.value.code == "invalid_date_range"
    with pytest.raises(ValidationError) as caught:
        search_options(excluded_domains=[f"d{i}.com" for i in range(MAX_EXCLUDED_DOMAINS + 1)])
    assert caught.value.code == "too_many_domains"
    with pytest.raises(ValidationError) as caught:
        search_options(excluded_domains=["ok.com", "not a domain"])
    assert "'not a domain'" in caught.value.message


@pytest.mark.parametrize(
    ("url", "excluded"),
    [
        ("https://example.com/", True),
        ("https://EXAMPLE.com./x", True),
        ("https://a.b.example.com/", True),
        ("http://user@example.com:8080/", True),
        ("https://example.com.evil.test/", False),
        ("https://notexample.com/", False),
        ("https://example.co/", False),
        ("", False),
        ("not a url", False),
    ],
)
def test_a_domain_excludes_itself_and_its_subdomains_only(url: str, excluded: bool) -> None:
    assert domain_excluded(url, ("example.com",)) is excluded


def _hit(key: str, published: date | None, url: str = "https://site.test/") -> SourceHit:
    return SourceHit(adapter="web", kind="article", key=key, title=key, url=url, published=published)


def test_date_ranges_are_inclusive_and_drop_undated_hits() -> None:
    options = SearchOptions(date_from=date(2024, 1, 1), date_to=date(2024, 12, 31))
    assert hit_allowed(_hit("a", date(2024, 1, 1)), options) and hit_allowed(_hit("b", date(2024, 12, 31)), options)
    assert not hit_allowed(_hit("c", date(2023, 12, 31)), options)
    assert not hit_allowed(_hit("d", date(2025, 1, 1)), options)
    assert not hit_allowed(_hit("e", None), options)
    assert hit_allowed(_hit("f", None), SearchOptions())


def test_keep_filters_dedupes_by_key_and_limits_in_order() -> None:
    hits = [
        _hit("a", date(2024, 5, 1)),
        _hit("a", date(2024, 5, 1)),
        _hit("x", date(2024, 5, 1), url="https://spam.test/"),
        _hit("b", date(2024, 6, 1)),
        _hit("c", date(2024, 7, 1)),
    ]
    options = SearchOptions(excluded_domains=("spam.test",))
    assert [h.key for h in keep(hits, options, limit=2)] == ["a", "b"]
