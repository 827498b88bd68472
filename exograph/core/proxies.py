"""The client's address: X-Forwarded-For counts only when the peer is a configured proxy (FORWARDED_ALLOW_IPS)."""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    networks: list[Network] = []
    for entry in entries:
        if entry.strip() == "*":
            raise ImproperlyConfigured(
                "FORWARDED_ALLOW_IPS must list the proxies' addresses, never '*' (anyone could forge X-Forwarded-For)."
            )
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError as exc:
            raise ImproperlyConfigured(f"FORWARDED_ALLOW_IPS: {entry!r} is not an IP address or network.") from exc
    return tuple(networks)


def trusted_proxies() -> tuple[Network, ...]:
    """The networks of FORWARDED_ALLOW_IPS. Raises ImproperlyConfigured for '*' or a malformed entry."""
    return _networks(tuple(settings.FORWARDED_ALLOW_IPS))


def is_trusted_proxy(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in trusted_proxies())


def client_ip(request: HttpRequest) -> str:
    """The client's address: the peer, unless the peer is a trusted proxy, then the nearest untrusted hop.

    uvicorn's --proxy-headers applies the same rule with the same list (FORWARDED_ALLOW_IPS), so
    REMOTE_ADDR is usually already the client; this also holds when the server does not rewrite it.
    """
    remote = str(request.META.get("REMOTE_ADDR") or "")
    if not is_trusted_proxy(remote):
        return remote
    hops = [hop.strip() for hop in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",") if hop.strip()]
    for hop in reversed(hops):
        if not is_trusted_proxy(hop):
            return hop
    return hops[0] if hops else remote
