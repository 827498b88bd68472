"""A research session's options applied to source hits: a date range (inclusive) and excluded domains
(a domain excludes its subdomains too). Pure functions; adapters filter their hits with `keep`, and
interfaces build validated options with `search_options`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date
from urllib.parse import urlsplit

import idna

from exograph.core.errors import ValidationError
from exograph.sources.base import SearchOptions, SourceHit

MAX_EXCLUDED_DOMAINS = 50
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def normalize_domain(value: str) -> str:
    """'Example.COM', '*.example.com', 'https://www.example.com/x' -> 'example.com' (a leading www. is
    dropped, so the whole site is excluded). Raises ValidationError naming the value."""
    raw = value.strip().lower()
    host = (urlsplit(raw).hostname or "") if "://" in raw else raw.split("/", 1)[0].split(":", 1)[0]
    host = host.lstrip("*").strip(".")
    host = host.removeprefix("www.")
    try:
        host = idna.encode(host, uts46=True).decode("ascii") if host else ""
    except idna.IDNAError:
        host = ""
    if not host or len(host) > 253 or not all(_LABEL.match(label) for label in host.split(".")):
        raise ValidationError(
            f"{value[:100]!r} is not a domain name.",
            code="invalid_domain",
            hint="List domains like example.com (subdomains are excluded with them).",
        )
    return host


def search_options(
    *, date_from: date | None = None, date_to: date | None = None, excluded_domains: Sequence[str] = ()
) -> SearchOptions:
    """Validated, normalised options. Raises ValidationError (range reversed, too many or bad domains)."""
    if date_from and date_to and date_from > date_to:
        raise ValidationError(
            "date_from is after date_to.", code="invalid_date_range", hint="Give date_from on or before date_to."
        )
    if len(excluded_domains) > MAX_EXCLUDED_DOMAINS:
        raise ValidationError(
            f"At most {MAX_EXCLUDED_DOMAINS} excluded domains are accepted.",
            code="too_many_domains",
            hint="Exclude a parent domain to cover its subdomains.",
        )
    domains = tuple(dict.fromkeys(normalize_domain(value) for value in excluded_domains))
    return SearchOptions(date_from=date_from, date_to=date_to, excluded_domains=domains)


def url_host(url: str) -> str:
    """The URL's host name, lower case, ASCII (IDNA), without a trailing dot; '' when it has none."""
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return ""
    if host.isascii():
        return host
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError:
        return host


def domain_excluded(url: str, excluded_domains: Iterable[str]) -> bool:
    """Whether url's host is one of the domains or a subdomain of one (domains already normalised)."""
    host = url_host(url)
    if not host:
        return False
    return any(host == domain or host.endswith("." + domain) for domain in excluded_domains)


def hit_allowed(hit: SourceHit, options: SearchOptions) -> bool:
    """Whether the hit passes the options. Under a date range a hit must have a known date inside it
    (an undated page cannot be shown to be in range). Callers re-check a read hit, whose URL is the page's
    final one after redirects."""
    if options.excluded_domains and domain_excluded(hit.url, options.excluded_domains):
        return False
    if options.date_from is None and options.date_to is None:
        return True
    if hit.published is None:
        return False
    if options.date_from is not None and hit.published < options.date_from:
        return False
    return options.date_to is None or hit.published <= options.date_to


def filters_active(options: SearchOptions) -> bool:
    return bool(options.excluded_domains or options.date_from or options.date_to)


def keep(hits: Iterable[SourceHit], options: SearchOptions, *, limit: int) -> list[SourceHit]:
    """The hits that pass the options, each key once, at most limit, in their order."""
    kept: list[SourceHit] = []
    seen: set[str] = set()
    for hit in hits:
        if hit.key in seen or not hit_allowed(hit, options):
            continue
        seen.add(hit.key)
        kept.append(hit)
        if len(kept) >= limit:
            break
    return kept
