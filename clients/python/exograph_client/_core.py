"""What the sync and async clients share: the calls (method, path, arguments, whether they are paid), the
headers, the configuration (ClientBase), the request a call builds, the retry decision, the wait loops' deadline
and the parsing of answers. No I/O here: Client and AsyncClient only send, sleep and await."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from exograph_client.errors import (
    DocumentFailedError,
    ExoGraphError,
    TransportError,
    WaitTimeoutError,
    error_from_response,
    mask_secrets,
)
from exograph_client.models import Document

__version__ = "0.1.0"
USER_AGENT = f"exograph-client/{__version__}"
SCOPES = ("world", "private")
RETRY_STATUSES = frozenset({429, 503})
EXPORT_FORMATS = ("graphml", "jsonl", "csv", "jsonld")
DEFAULT_TIMEOUT = 120.0


@dataclass
class Call:
    """One REST call. A paid call (upload, chat message, research) carries an Idempotency-Key, made once here
    and sent again by every retry of the call, so the server charges it once."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: dict[str, Any] | None = None
    files: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    paid: bool = False
    idempotency_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.paid:
            self.headers["Idempotency-Key"] = self.idempotency_key or f"exoclient-{uuid.uuid4().hex}"
        if self.params:
            self.params = {
                k: ("true" if v is True else "false" if v is False else v)
                for k, v in self.params.items()
                if v is not None
            }
        if self.json is not None:
            self.json = {k: v for k, v in self.json.items() if v is not None}


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    max_wait: float = 30.0  # seconds; a longer Retry-After is cut to this
    backoff: float = 0.5  # without Retry-After: backoff * 2**attempt, at most max_wait

    def delay(self, attempt: int, retry_after: float | None) -> float:
        wanted = retry_after if retry_after is not None else self.backoff * (2**attempt)
        return float(min(max(0.0, wanted), self.max_wait))


class ClientBase:
    """The configuration Client and AsyncClient share (base URL, default scope, retry policy) and their decisions
    that need no I/O: the request a call builds and whether an error answer is retried."""

    base_url: str
    scope: str | None
    retry: RetryPolicy

    def _configure(
        self,
        base_url: str,
        api_key: str,
        scope: str | None,
        max_retries: int,
        max_retry_wait: float,
        headers: Mapping[str, str] | None,
    ) -> dict[str, str]:
        """Set base_url, scope and retry; returns the headers every request carries."""
        self.base_url = base_url.rstrip("/")
        self.scope = check_scope(scope)
        self.retry = RetryPolicy(max_retries=max_retries, max_wait=max_retry_wait)
        return default_headers(api_key, self.scope, headers)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key='exo_***', scope={self.scope!r})"

    @staticmethod
    def _request(http: httpx.Client | httpx.AsyncClient, call: Call) -> httpx.Request:
        return http.build_request(
            call.method, call.path, params=call.params, json=call.json, files=call.files, data=call.data,
            headers=call.headers,
        )  # fmt: skip

    def _failure(self, response: httpx.Response, attempt: int) -> tuple[ExoGraphError, float | None]:
        """The error an answer of 400 or more raises, and the seconds to wait before trying again (429/503,
        Retry-After honoured, bounded), or None: raise it now."""
        error = error_from_response(response)
        if response.status_code in RETRY_STATUSES and attempt < self.retry.max_retries:
            return error, self.retry.delay(attempt, error.retry_after)
        return error, None


class Deadline:
    """A wait loop's clock: wait() is the next pause, or raises WaitTimeoutError once `timeout` has passed."""

    def __init__(self, what: str, object_id: str, *, timeout: float, poll: float) -> None:
        self.what, self.object_id, self.timeout, self.poll = what, object_id, timeout, poll
        self.at = time.monotonic() + timeout

    def wait(self, status: str) -> float:
        if time.monotonic() >= self.at:
            raise WaitTimeoutError(
                status=0,
                code="wait_timeout",
                message=f"The {self.what} {self.object_id} is still {status} after {self.timeout:g} s.",
                hint="Wait longer (timeout=) or check it later.",
            )
        return min(self.poll, max(0.0, self.at - time.monotonic()))


def document_finished(document: Document) -> Document:
    """The document a wait ends on; DocumentFailedError when it failed or was cancelled."""
    if document.status in ("failed", "cancelled"):
        reason = document.failure.reason if document.failure else ""
        raise DocumentFailedError(
            status=0,
            code=f"document_{document.status}",
            message=f"Document {document.id} {document.status}" + (f": {reason}" if reason else "."),
            hint="Retry it with POST /api/v1/documents/{id}/retry/ or upload it again.",
            extra={"document": document.model_dump()},
        )
    return document


def check_scope(scope: str | None) -> str | None:
    if scope is not None and scope not in SCOPES:
        raise ValueError(f"scope must be 'world' or 'private'; got {scope[:40]!r}.")
    return scope


def default_headers(api_key: str, scope: str | None, extra: Mapping[str, str] | None) -> dict[str, str]:
    if not api_key:
        raise ValueError("api_key is empty: pass the exo_… key from the API keys page.")
    headers = {"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT, "Accept": "application/json"}
    if scope:
        headers["X-Graph-Scope"] = scope
    headers.update(extra or {})
    return headers


def transport_error(call: Call, exc: httpx.HTTPError, base_url: str) -> ExoGraphError:
    if isinstance(exc, httpx.TimeoutException):
        return TransportError(
            status=0,
            code="timeout",
            message=f"The ExoGraph API did not answer {call.method} {call.path} in time.",
            hint="Retry in a moment, or raise the client's timeout.",
        )
    return TransportError(
        status=0,
        code="connection_error",
        message=mask_secrets(f"Could not reach the ExoGraph API at {base_url} ({type(exc).__name__})."),
        hint="Check the base URL and that the server is running.",
    )


def json_of(response: httpx.Response, call: Call) -> Any:
    if response.status_code == 204 or not response.content:
        return None
    try:
        return response.json()
    except ValueError as exc:
        raise ExoGraphError(
            status=response.status_code,
            code="invalid_response",
            message=f"The ExoGraph API answered {call.method} {call.path} with something that is not JSON.",
            hint="Check the base URL points at an ExoGraph server.",
        ) from exc


def export_format(fmt: str) -> str:
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}; got {fmt[:40]!r}.")
    return fmt


# --- the calls -------------------------------------------------------------------------------------


def graphs_list(graph_scope: str | None, limit: int | None) -> Call:
    return Call("GET", "/api/v1/graphs/", params={"graph_scope": check_scope(graph_scope), "limit": limit})


def graphs_create(name: str, graph_scope: str | None) -> Call:
    return Call("POST", "/api/v1/graphs/", json={"name": name, "graph_scope": check_scope(graph_scope)})


def graphs_get(graph_id: str) -> Call:
    return Call("GET", f"/api/v1/graphs/{_segment(graph_id)}/")


def graphs_export(graph_id: str, fmt: str) -> Call:
    return Call("GET", f"/api/v1/graphs/{_segment(graph_id)}/export/", params={"format": export_format(fmt)})


IMPORT_FORMATS = ("jsonl", "csv")


def graphs_import(
    graph_id: str,
    source: str | os.PathLike[str] | None,
    *,
    content: str | None,
    fmt: str | None,
    dry_run: bool,
    idempotency_key: str | None,
) -> Call:
    """POST /graphs/{id}/import/ with the batch as text: `content`, or the file at `source` (read as UTF-8). The
    format is `fmt`, else the file's extension (.jsonl/.ndjson or .csv)."""
    if (content is None) == (source is None):
        raise ValueError("pass the batch as content= or as a path, one of them.")
    if source is not None:
        path = Path(source)
        content = path.read_text(encoding="utf-8-sig")
        if fmt is None:
            suffix = path.suffix.lower().lstrip(".")
            fmt = "jsonl" if suffix in ("jsonl", "ndjson") else suffix
    if fmt not in IMPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(IMPORT_FORMATS)}; got {str(fmt)[:40]!r}.")
    return Call(
        "POST",
        f"/api/v1/graphs/{_segment(graph_id)}/import/",
        json={"format": fmt, "content": content, "dry_run": True if dry_run else None},
        paid=not dry_run,
        idempotency_key=idempotency_key,
    )


def documents_upload(
    source: str | os.PathLike[str] | bytes | None,
    *,
    text: str | None,
    filename: str | None,
    title: str | None,
    source_url: str | None,
    text_format: str | None,
    graph_id: str | None,
    graph_scope: str | None,
    dry_run: bool,
    idempotency_key: str | None,
) -> Call:
    """A file (a path or its bytes, sent as multipart) or a text (JSON: text and title)."""
    common = {"graph_id": graph_id, "graph_scope": check_scope(graph_scope)}
    if (source is None) == (text is None):
        raise ValueError("Pass exactly one of a file (path or bytes) or text=.")
    if text is not None:
        body = {
            **common,
            "text": text,
            "title": title or (filename or "Untitled text"),
            "source_url": source_url,
            "text_format": text_format,
            "dry_run": dry_run or None,
        }
        return Call("POST", "/api/v1/documents/", json=body, paid=not dry_run, idempotency_key=idempotency_key)
    if isinstance(source, bytes):
        content, name = source, filename or "upload.bin"
    else:
        path = Path(source)  # type: ignore[arg-type]
        content, name = path.read_bytes(), filename or path.name
    form = {
        **{k: v for k, v in common.items() if v},
        **({"title": title} if title else {}),
        **({"source_url": source_url} if source_url else {}),
        **({"dry_run": "true"} if dry_run else {}),
        "filename": name,
    }
    return Call(
        "POST",
        "/api/v1/documents/",
        files={"file": (name, content)},
        data=form,
        paid=not dry_run,
        idempotency_key=idempotency_key,
    )


def documents_get(document_id: str) -> Call:
    return Call("GET", f"/api/v1/documents/{_segment(document_id)}/")


def documents_list(graph_scope: str | None, limit: int | None) -> Call:
    return Call("GET", "/api/v1/documents/", params={"graph_scope": check_scope(graph_scope), "limit": limit})


def search(query: str, n_results: int, graph_id: str | None, graph_scope: str | None) -> Call:
    params = {"query": query, "n_results": n_results, "graph_id": graph_id, "graph_scope": check_scope(graph_scope)}
    return Call("GET", "/api/v1/entities/search", params=params)


def retrieve(question: str, mode: str | None, top_k: int, graph_id: str | None, graph_scope: str | None) -> Call:
    body = {
        "question": question,
        "mode": mode,
        "top_k": top_k,
        "graph_id": graph_id,
        "graph_scope": check_scope(graph_scope),
    }
    return Call("POST", "/api/v1/retrieve/", json=body)


def world_entity(entity: str, evidence: bool, limit: int) -> Call:
    return Call("GET", f"/api/v1/world/entities/{_segment(entity)}/", params={"evidence": evidence, "limit": limit})


def chat_ask(
    message: str,
    *,
    session_id: str | None,
    graph_id: str | None,
    graph_scope: str | None,
    model: str | None,
    reasoning_engine: str | None,
    idempotency_key: str | None,
) -> Call:
    body = {
        "message": message,
        "session_id": session_id,
        "graph_id": graph_id,
        "graph_scope": check_scope(graph_scope),
        "model": model,
        "reasoning_engine": reasoning_engine,
    }
    return Call("POST", "/api/v1/chat/messages/", json=body, paid=True, idempotency_key=idempotency_key)


def research_start(
    query: str, options: Mapping[str, Any], idempotency_key: str | None, *, dry_run: bool = False
) -> Call:
    if "dry_run" in options:
        raise ValueError("research.start starts a paid session; for its price call research.quote(query, ...).")
    body = {"query": query, **options, **({"dry_run": True} if dry_run else {})}
    if "graph_scope" in body:
        check_scope(body["graph_scope"])
    return Call("POST", "/api/v1/research/", json=body, paid=not dry_run, idempotency_key=idempotency_key)


def research_get(session_id: str) -> Call:
    return Call("GET", f"/api/v1/research/{_segment(session_id)}/")


def research_list(graph_scope: str | None, limit: int | None) -> Call:
    return Call("GET", "/api/v1/research/", params={"graph_scope": check_scope(graph_scope), "limit": limit})


def research_export(session_id: str, fmt: str) -> Call:
    if fmt not in ("md", "docx"):
        raise ValueError(f"format must be md or docx; got {fmt[:40]!r}.")
    return Call("GET", f"/api/v1/research/{_segment(session_id)}/export/", params={"format": fmt})


def balance() -> Call:
    return Call("GET", "/api/v1/billing/balance/")


def next_page(page: Any) -> tuple[list[Any], Call | None]:
    """A paginated answer's results and the call of its next page (its `next` link), if any."""
    results = list(page.get("results") or []) if isinstance(page, dict) else []
    nxt = page.get("next") if isinstance(page, dict) else None
    return results, (Call("GET", str(nxt)) if nxt else None)


def _segment(value: str) -> str:
    from urllib.parse import quote

    if not value:
        raise ValueError("An id is empty.")
    return quote(str(value), safe="")
