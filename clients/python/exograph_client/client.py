"""The synchronous client.

with Client("https://exograph.example", api_key="exo_…") as exo:
    for graph in exo.graphs.list():
        print(graph.name, graph.counts.entities)
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from exograph_client import _core
from exograph_client._core import DEFAULT_TIMEOUT, Call
from exograph_client.models import (
    Balance,
    ChatAnswer,
    Document,
    DocumentSummary,
    Entity,
    Graph,
    ImportQuote,
    ImportResult,
    Report,
    ResearchQuote,
    ResearchSession,
    Retrieval,
    SearchResult,
    UploadQuote,
)


class Client(_core.ClientBase):
    """ExoGraph REST client: base URL, API key and default scope. Every error answer raises ExoGraphError."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        scope: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        max_retry_wait: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        default_headers = self._configure(base_url, api_key, scope, max_retries, max_retry_wait, headers)
        self.sleep = sleep
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=default_headers,
            timeout=timeout,
            transport=transport,
        )
        self.graphs = Graphs(self)
        self.documents = Documents(self)
        self.chat = Chat(self)
        self.research = Research(self)

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- transport -------------------------------------------------------------------------------

    def send(self, call: Call, *, stream: bool = False) -> httpx.Response:
        """Send a call, retrying 429/503 (Retry-After honoured, bounded); raise ExoGraphError on an error answer.
        With stream=True the answer's body is not read yet (the caller closes the response)."""
        attempt = 0
        while True:
            try:
                response = self._http.send(self._request(self._http, call), stream=stream)
            except httpx.HTTPError as exc:
                raise _core.transport_error(call, exc, self.base_url) from exc
            if response.status_code < 400:
                return response
            if stream:
                response.read()
                response.close()
            error, wait = self._failure(response, attempt)
            if wait is None:
                raise error
            self.sleep(wait)
            attempt += 1

    def call(self, call: Call) -> Any:
        return _core.json_of(self.send(call), call)

    def pages(self, call: Call | None) -> Iterator[Any]:
        """Every item of a paginated list, page after page (following `next`)."""
        while call is not None:
            results, call = _core.next_page(self.call(call))
            yield from results

    # --- top-level methods -----------------------------------------------------------------------

    def search(
        self, query: str, *, n_results: int = 10, graph_id: str | None = None, graph_scope: str | None = None
    ) -> SearchResult:
        """Entities by meaning and name (GET /entities/search)."""
        return SearchResult.model_validate(self.call(_core.search(query, n_results, graph_id, graph_scope)))

    def retrieve(
        self,
        question: str,
        *,
        mode: str | None = None,
        top_k: int = 12,
        graph_id: str | None = None,
        graph_scope: str | None = None,
    ) -> Retrieval:
        """The evidence ExoGraph retrieves for question, without an answer (POST /retrieve/; free): mode "rag"
        (passages) or "graph" (the default: facts, relations and entities too), each item with its citation."""
        return Retrieval.model_validate(self.call(_core.retrieve(question, mode, top_k, graph_id, graph_scope)))

    def world_entity(self, entity: str, *, evidence: bool = False, limit: int = 25) -> Entity:
        """An entity of the World Graph with its related entities (`related`, each with its evidence if asked)."""
        body = self.call(_core.world_entity(entity, evidence, limit))
        return Entity.model_validate({**body["entity"], "related": body.get("related", [])})

    def balance(self) -> Balance:
        return Balance.model_validate(self.call(_core.balance()))


class Graphs:
    def __init__(self, client: Client) -> None:
        self._client = client

    def list(self, *, graph_scope: str | None = None, page_size: int | None = None) -> Iterator[Graph]:
        for item in self._client.pages(_core.graphs_list(graph_scope, page_size)):
            yield Graph.model_validate(item)

    def create(self, name: str, *, graph_scope: str | None = None) -> Graph:
        return Graph.model_validate(self._client.call(_core.graphs_create(name, graph_scope)))

    def get(self, graph_id: str) -> Graph:
        return Graph.model_validate(self._client.call(_core.graphs_get(graph_id)))

    def iter_export(self, graph_id: str, format: str = "jsonl") -> Iterator[bytes]:
        """The export streamed, chunk by chunk (the World Graph, id "world": your contributions only)."""
        response = self._client.send(_core.graphs_export(graph_id, format), stream=True)
        try:
            yield from response.iter_bytes()
        finally:
            response.close()

    def export(self, graph_id: str, format: str = "jsonl", *, to: str | os.PathLike[str] | None = None) -> bytes:
        """The export in one piece; with `to`, streamed into that file instead (and b"" returned)."""
        if to is None:
            return b"".join(self.iter_export(graph_id, format))
        with Path(to).open("wb") as out:
            for chunk in self.iter_export(graph_id, format):
                out.write(chunk)
        return b""

    def import_facts(
        self,
        graph_id: str,
        path: str | os.PathLike[str] | None = None,
        *,
        content: str | None = None,
        format: str | None = None,
        idempotency_key: str | None = None,
    ) -> ImportResult:
        """Import triples (subject, predicate, object[, source, evidence, ...]) into a private graph: a JSONL or CSV
        file (format from its extension) or `content` with `format`; a graph's own export reads back too.
        Charged per started 1,000 rows (an Idempotency-Key makes retries safe); a bad row raises
        InvalidRequestError whose extra carries its `line`."""
        call = _core.graphs_import(
            graph_id, path, content=content, fmt=format, dry_run=False, idempotency_key=idempotency_key
        )
        return ImportResult.model_validate(self._client.call(call))

    def quote_import(
        self,
        graph_id: str,
        path: str | os.PathLike[str] | None = None,
        *,
        content: str | None = None,
        format: str | None = None,
    ) -> ImportQuote:
        """What importing the batch would cost (dry run: every row validated, nothing charged or written)."""
        call = _core.graphs_import(graph_id, path, content=content, fmt=format, dry_run=True, idempotency_key=None)
        return ImportQuote.model_validate(self._client.call(call))


class Documents:
    def __init__(self, client: Client) -> None:
        self._client = client

    def upload(
        self,
        file: str | os.PathLike[str] | bytes | None = None,
        *,
        text: str | None = None,
        filename: str | None = None,
        title: str | None = None,
        source_url: str | None = None,
        text_format: str | None = None,
        graph_id: str | None = None,
        graph_scope: str | None = None,
        idempotency_key: str | None = None,
    ) -> Document:
        """Upload a file (a path or its bytes) or a text; charged (an Idempotency-Key makes retries safe).
        The answer's status is pending/processing, or unchanged when the same file is already in the graph."""
        call = _core.documents_upload(
            file, text=text, filename=filename, title=title, source_url=source_url, text_format=text_format,
            graph_id=graph_id, graph_scope=graph_scope, dry_run=False, idempotency_key=idempotency_key,
        )  # fmt: skip
        return Document.model_validate(self._client.call(call))

    def quote(
        self,
        file: str | os.PathLike[str] | bytes | None = None,
        *,
        text: str | None = None,
        filename: str | None = None,
        title: str | None = None,
        graph_id: str | None = None,
        graph_scope: str | None = None,
    ) -> UploadQuote:
        """What the upload would cost (dry run: nothing charged)."""
        call = _core.documents_upload(
            file, text=text, filename=filename, title=title, source_url=None, text_format=None,
            graph_id=graph_id, graph_scope=graph_scope, dry_run=True, idempotency_key=None,
        )  # fmt: skip
        return UploadQuote.model_validate(self._client.call(call))

    def get(self, document_id: str) -> Document:
        return Document.model_validate(self._client.call(_core.documents_get(document_id)))

    def list(self, *, graph_scope: str | None = None, page_size: int | None = None) -> Iterator[DocumentSummary]:
        for item in self._client.pages(_core.documents_list(graph_scope, page_size)):
            yield DocumentSummary.model_validate(item)

    def wait_until_processed(self, document_id: str, *, timeout: float = 600.0, poll: float = 1.0) -> Document:
        """Poll until the document is processed (or unchanged). Raises DocumentFailedError, WaitTimeoutError."""
        deadline = _core.Deadline("document", document_id, timeout=timeout, poll=poll)
        while True:
            document = self.get(document_id)
            if document.done:
                return _core.document_finished(document)
            self._client.sleep(deadline.wait(document.status))


class Chat:
    def __init__(self, client: Client) -> None:
        self._client = client

    def ask(
        self,
        message: str,
        *,
        session_id: str | None = None,
        graph_id: str | None = None,
        graph_scope: str | None = None,
        model: str | None = None,
        reasoning_engine: str | None = None,
        idempotency_key: str | None = None,
    ) -> ChatAnswer:
        """A question answered from your graphs, with its cited evidence (charged; refunded if not answered)."""
        call = _core.chat_ask(
            message, session_id=session_id, graph_id=graph_id, graph_scope=graph_scope, model=model,
            reasoning_engine=reasoning_engine, idempotency_key=idempotency_key,
        )  # fmt: skip
        return ChatAnswer.model_validate(self._client.call(call))


class Research:
    def __init__(self, client: Client) -> None:
        self._client = client

    def start(self, query: str, *, idempotency_key: str | None = None, **options: Any) -> ResearchSession:
        """Start a session (options: budget_credits, graph_id, graph_scope, model, sources, date_from, date_to,
        excluded_domains, watch). Holds its budget."""
        return ResearchSession.model_validate(self._client.call(_core.research_start(query, options, idempotency_key)))

    def quote(self, query: str, **options: Any) -> ResearchQuote:
        """What start(query, **options) would hold (dry run: nothing held or charged)."""
        return ResearchQuote.model_validate(self._client.call(_core.research_start(query, options, None, dry_run=True)))

    def get(self, session_id: str) -> ResearchSession:
        return ResearchSession.model_validate(self._client.call(_core.research_get(session_id)))

    def list(self, *, graph_scope: str | None = None, page_size: int | None = None) -> Iterator[ResearchSession]:
        for item in self._client.pages(_core.research_list(graph_scope, page_size)):
            yield ResearchSession.model_validate(item)

    def report(self, session_id: str) -> Report | None:
        """The session's structured report (None until it has one)."""
        return self.get(session_id).report

    def export_report(self, session_id: str, format: str = "md") -> bytes:
        """The report as Markdown or DOCX."""
        return self._client.send(_core.research_export(session_id, format)).content

    def wait(self, session_id: str, *, timeout: float = 900.0, poll: float = 2.0) -> ResearchSession:
        """Poll until the session is completed, failed or cancelled. Raises WaitTimeoutError."""
        deadline = _core.Deadline("research session", session_id, timeout=timeout, poll=poll)
        while True:
            session = self.get(session_id)
            if session.done:
                return session
            self._client.sleep(deadline.wait(session.status))
