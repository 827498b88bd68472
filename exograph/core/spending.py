"""Which API key the current request (or task) spends with: named by authentication (accounts), read where money is
spent (billing.services.caps checks the key's monthly cap and records the key on its ledger entries).

It lives here, below both, so that accounts need not import billing to name the key, nor billing accounts' code to
read it. Each request starts with no key (billing.middleware clears it); a task that spends for a key sets it for
its own run with `spending_key(...)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass


@dataclass(frozen=True)
class SpendingKey:
    """The API key of the current request: its id, and whether it had a cap when it authenticated."""

    id: int
    capped: bool


_current: ContextVar[SpendingKey | None] = ContextVar("billing_spending_key", default=None)


def spending_key_use(*, key_id: int, capped: bool) -> Token[SpendingKey | None]:
    """Make `key_id` the key whose requests spend from here on (in this context); returns the token to reset."""
    return _current.set(SpendingKey(id=key_id, capped=capped))


def spending_key_clear() -> Token[SpendingKey | None]:
    """No key from here on (a new request begins); returns the token to reset."""
    return _current.set(None)


def spending_key_reset(token: Token[SpendingKey | None]) -> None:
    _current.reset(token)


@contextmanager
def spending_key(*, key_id: int | None, capped: bool = False) -> Iterator[None]:
    """Within the block, spends are made by `key_id` (None: by no key, e.g. a task or the web UI)."""
    token = spending_key_clear() if key_id is None else spending_key_use(key_id=key_id, capped=capped)
    try:
        yield
    finally:
        spending_key_reset(token)


def spending_key_current() -> SpendingKey | None:
    return _current.get()
