"""A fetcher that is safe on a hosted service (SSRF): http/https only; every address a name resolves
to must be public (no private, loopback, link-local, reserved or multicast; loopback only when
WEB_FETCH_ALLOW_LOOPBACK is on, for tests); the connection goes to the checked address (no DNS
rebinding between check and connect; TLS still verifies the name via SNI); each redirect is checked
again; timeouts (per read and for the whole fetch), content types and sizes are capped by settings.
Source adapters fetch API replies (Atom, JSON) through it too, naming the types they accept."""

from __future__ import annotations

import ipaddress
import logging
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
from django.conf import settings

from exograph.core.errors import ExoGraphError

logger = logging.getLogger(__name__)

ALLOWED_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
USER_AGENT = "ExoGraph/1.0 (+https://exograph.example/bot)"


class FetchRefused(ExoGraphError):
    """The URL may not be fetched (scheme, address, redirect, type or size): a retry will not help."""

    status, code = 400, "fetch_refused"


class FetchFailed(ExoGraphError):
    """The page could not be fetched (connection, timeout, HTTP error)."""

    status, code = 502, "fetch_failed"


@dataclass(frozen=True)
class FetchedPage:
    url: str  # the final URL after redirects
    content_type: str
    body: bytes
    truncated: bool = False


def address_allowed(address: str) -> bool:
    """Whether a resolved address may be connected to. Pure (reads WEB_FETCH_ALLOW_LOOPBACK)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return bool(settings.WEB_FETCH_ALLOW_LOOPBACK)
    return ip.is_global and not ip.is_multicast and not ip.is_reserved


def resolve_public(host: str, port: int) -> str:
    """The first address of host after checking all of them. Raises FetchRefused, FetchFailed."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchFailed(f"The name {host[:100]!r} does not resolve.", code="fetch_unresolvable") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise FetchFailed(f"The name {host[:100]!r} does not resolve.", code="fetch_unresolvable")
    for address in addresses:
        if not address_allowed(address):
            raise FetchRefused(
                f"{host[:100]} resolves to a non-public address; it is not fetched.", code="fetch_private_address"
            )
    return addresses[0]


def _target(url: str) -> tuple[str, str, str, int]:
    """(scheme, host, url with the checked address instead of the name, port)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchRefused(f"Only http and https URLs are fetched; got {scheme or 'none'!r}.", code="fetch_scheme")
    host = parts.hostname or ""
    if not host:
        raise FetchRefused("The URL has no host.", code="fetch_no_host")
    if parts.username or parts.password:
        raise FetchRefused("URLs with credentials are not fetched.", code="fetch_credentials")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError as exc:
        raise FetchRefused("The URL's port is invalid.", code="fetch_port") from exc
    address = resolve_public(host, port)
    shown = f"[{address}]" if ":" in address else address
    direct = urlunsplit((scheme, f"{shown}:{port}", parts.path or "/", parts.query, ""))
    return scheme, host, direct, port


def fetch(
    url: str,
    *,
    client: httpx.Client | None = None,
    accept: Sequence[str] = ALLOWED_TYPES,
    max_bytes: int | None = None,
    timeout: float | None = None,
) -> FetchedPage:
    """GET url safely (see the module doc): only the content types in accept, at most max_bytes
    (WEB_FETCH_MAX_BYTES), each read within timeout and the whole fetch within WEB_FETCH_DEADLINE_SECONDS.
    Network call; raises FetchRefused or FetchFailed."""
    own = client is None
    seconds = timeout or settings.WEB_FETCH_TIMEOUT_SECONDS
    http = client or httpx.Client(timeout=seconds, follow_redirects=False, verify=True)
    deadline = time.monotonic() + max(settings.WEB_FETCH_DEADLINE_SECONDS, seconds)
    allowed = tuple(kind.lower() for kind in accept)
    cap = max_bytes or settings.WEB_FETCH_MAX_BYTES
    try:
        current = url
        for _ in range(settings.WEB_FETCH_MAX_REDIRECTS + 1):
            if time.monotonic() > deadline:
                raise FetchFailed("The page did not answer in time.", code="fetch_timeout")
            scheme, host, direct, port = _target(current)
            default_port = port == (443 if scheme == "https" else 80)
            headers = {
                "Host": host if default_port else f"{host}:{port}",
                "User-Agent": USER_AGENT,
                "Accept": ", ".join(allowed),
            }
            extensions = {"sni_hostname": host} if scheme == "https" else {}
            try:
                with http.stream("GET", direct, headers=headers, extensions=extensions) as response:
                    if response.is_redirect:
                        location = response.headers.get("location", "")
                        if not location:
                            raise FetchFailed("A redirect without a Location.", code="fetch_bad_redirect")
                        current = urljoin(current, location)
                        continue
                    if response.status_code >= 400:
                        raise FetchFailed(f"The page answered {response.status_code}.", code="fetch_http_error")
                    kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
                    if kind not in allowed:
                        raise FetchRefused(f"Content type {kind[:60]!r} is not fetched.", code="fetch_content_type")
                    declared = response.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > cap:
                        raise FetchRefused(f"The page is larger than {cap} bytes.", code="fetch_too_large")
                    body = bytearray()
                    truncated = False
                    for piece in response.iter_bytes():
                        if time.monotonic() > deadline:  # a server dripping bytes never trips the read timeout
                            raise FetchFailed("The page did not answer in time.", code="fetch_timeout")
                        body.extend(piece)
                        if len(body) > cap:
                            truncated = True
                            del body[cap:]
                            break
                    return FetchedPage(url=current, content_type=kind, body=bytes(body), truncated=truncated)
            except httpx.TimeoutException as exc:
                raise FetchFailed("The page did not answer in time.", code="fetch_timeout") from exc
            except httpx.HTTPError as exc:
                raise FetchFailed(f"The page could not be fetched ({type(exc).__name__}).") from exc
        raise FetchRefused("Too many redirects.", code="fetch_too_many_redirects")
    finally:
        if own:
            http.close()
