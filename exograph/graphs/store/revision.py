"""A graph store's revision: a random token on the graph's primary that every write replaces.

What a process caches about one graph (graphs/retrieval/subgraph_index.py) is valid for the token it read before
loading it. Every write to the store (core._run's writes, store_vectors_compact) sets a fresh token once it is done,
even when it failed (store_drop deletes it); the dozen queries of one document's write (store_revision_once) set one
when the last is done. So a reader that loaded during a write sees a new token on its next query and reloads: a cache
entry never holds less than its token's state. Random tokens, not a counter: a graph moved to another server
(graph_move) or a key dropped and written again can never bring back a token an old entry holds.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import redis

from exograph.core.falkor import falkordb_client, server_of_key

REVISION_PREFIX = "exo:rev:"

# This thread's stores whose writes bump their revision once, at the end of a store_revision_once block: store name
# -> whether a write ran in the block yet.
_once = threading.local()


def revision_key(store_name: str) -> str:
    return f"{REVISION_PREFIX}{store_name}"


def store_revision_bump(store_name: str, *, quiet: bool = False) -> None:
    """A fresh token for store_name, after a write. Raises StoreUnavailable when the server cannot take it (unless
    quiet: after a write that failed anyway)."""
    try:
        falkordb_client(server_of_key(store_name)).connection.set(revision_key(store_name), uuid.uuid4().hex)
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        if not quiet:
            raise _unavailable(exc) from exc


@contextmanager
def store_revision_once(store_name: str) -> Iterator[None]:
    """Inside the block (this thread), the writes to store_name bump its revision once, when the block ends (ended by
    an error too: quiet then), not after each query: one document's write is a dozen queries. A reader that loads
    during the block holds the token from before it, so it reloads after the bump (never less than its token's
    state, as the module says). Nested blocks for the same store share the outermost one."""
    pending: dict[str, bool] | None = getattr(_once, "pending", None)
    if pending is None:
        pending = _once.pending = {}
    if store_name in pending:
        yield
        return
    pending[store_name] = False
    failed = True
    try:
        yield
        failed = False
    finally:
        if pending.pop(store_name):
            store_revision_bump(store_name, quiet=failed)


def store_revision_later(store_name: str) -> bool:
    """True if a write to store_name just made is bumped at the end of this thread's store_revision_once block
    (the block then bumps once); False if the caller bumps now."""
    pending: dict[str, bool] | None = getattr(_once, "pending", None)
    if pending is None or store_name not in pending:
        return False
    pending[store_name] = True
    return True


def store_revision_forget(store_name: str) -> None:
    """Drop store_name's token with its store (a dropped graph leaves no key; a reader of a store of that name would
    set a fresh token, unlike any an index holds). Best effort: the store is gone either way."""
    try:
        falkordb_client(server_of_key(store_name)).connection.delete(revision_key(store_name))
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return


def store_revision(store_name: str) -> str | None:
    """The store's current token (one is set if it has none yet); None when its primary cannot say (then nothing is
    cached: the reads go where they would go anyway, a replica included, and fail as reads do)."""
    key = revision_key(store_name)
    try:
        connection = falkordb_client(server_of_key(store_name)).connection
        token = connection.get(key)
        if token is None:
            connection.set(key, uuid.uuid4().hex, nx=True)
            token = connection.get(key)
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return None
    if token is None:
        return None
    return token.decode() if isinstance(token, bytes) else str(token)


def _unavailable(exc: Exception) -> Exception:
    from exograph.graphs.store.core import STORE_DOWN, STORE_TIMEOUT, StoreUnavailable  # core imports this module

    timeout = isinstance(exc, redis.TimeoutError)
    return StoreUnavailable(
        STORE_TIMEOUT if timeout else STORE_DOWN, code="graph_store_timeout" if timeout else "graph_store_unavailable"
    )
