"""exograph_client against the live service: upload a text, wait, search, chat, export, list pages; errors come
back as exceptions carrying the envelope; 429/503 are retried honouring Retry-After (a fake transport there only)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from exograph_client import (
    AsyncClient,
    Client,
    DocumentFailedError,
    InvalidRequestError,
    NotFoundError,
    RateLimitError,
    WaitTimeoutError,
)

from billing.services import credit_balance

pytestmark = pytest.mark.django_db(transaction=True)

TEXT = (
    "Quantum computing uses qubits to run algorithms such as Shor's algorithm. "
    "Quantum error correction protects qubits from noise and decoherence."
)


def test_upload_wait_search_chat_and_export_against_the_live_service(live_url, alice, alice_key, fund) -> None:  # type: ignore[no-untyped-def]
    fund(alice, 100)
    with Client(live_url, api_key=alice_key) as exo:
        graph = exo.graphs.create("Client notes")
        assert graph.owned and graph.scope == "private"
        uploaded = exo.documents.upload(text=TEXT, title="Quantum notes", graph_id=graph.id)
        assert uploaded.graph_id == graph.id and uploaded.credits_charged and uploaded.credits_charged > 0
        document = exo.documents.wait_until_processed(uploaded.id, timeout=120)
        assert document.status == "processed" and document.entity_count > 0
        assert exo.graphs.get(graph.id).counts.documents == 1

        found = exo.search("qubits and error correction", graph_id=graph.id)
        assert found.count >= 1 and found.query == "qubits and error correction"
        assert all(hit.graph_id == graph.id and 0 <= hit.relevance <= 1 for hit in found.results)

        answer = exo.chat.ask("What protects qubits from noise?", graph_id=graph.id)
        assert answer.answered and "error correction" in answer.answer.lower()
        assert answer.evidence and answer.evidence[0].document_id == uploaded.id
        assert answer.balance == credit_balance(account=alice) == exo.balance().balance

        lines = [json.loads(line) for line in exo.graphs.export(graph.id, "jsonl").decode().splitlines()]
        names = {r["name"] for r in lines if r["record"] == "entity"}
        assert {hit.name for hit in found.results} <= names
        assert {r["document_id"] for r in lines if r["record"] == "passage"} == {uploaded.id}

        assert uploaded.id in {d.id for d in exo.documents.list()}


def test_lists_follow_next_links_as_iterators(live_url, alice, alice_key) -> None:  # type: ignore[no-untyped-def]
    with Client(live_url, api_key=alice_key) as exo:
        made = {exo.graphs.create(f"Graph {i}").id for i in range(3)}
        listed = [g.id for g in exo.graphs.list(page_size=1)]  # three pages at least
        assert made <= set(listed) and len(listed) == len(set(listed))


def test_an_error_answer_becomes_the_exception_with_its_envelope(live_url, alice_key, charlie_key) -> None:  # type: ignore[no-untyped-def]
    with Client(live_url, api_key=alice_key) as alice_exo:
        graph = alice_exo.graphs.create("Private")
    with Client(live_url, api_key=charlie_key) as exo:
        with pytest.raises(NotFoundError) as missing:
            exo.graphs.get(graph.id)  # another account's private graph
        assert missing.value.status == 404 and missing.value.code == "graph_not_found"
        assert missing.value.message.startswith("No graph with id") and "GET /api/v1/graphs/" in missing.value.hint
        with pytest.raises(InvalidRequestError) as bad:
            exo.graphs.create("")
        assert bad.value.status == 400 and bad.value.code == "invalid" and "name" in bad.value.extra.get("fields", {})


def test_the_async_client_reads_the_same_service(live_url, alice_key) -> None:  # type: ignore[no-untyped-def]
    async def run() -> tuple[str, list[str], str]:
        async with AsyncClient(live_url, api_key=alice_key, scope="private") as exo:
            graph = await exo.graphs.create("Async notes")
            listed = [g.id async for g in exo.graphs.list()]
            exported = await exo.graphs.export(graph.id, "graphml")
            return graph.id, listed, exported.decode()

    graph_id, listed, graphml = asyncio.run(run())
    assert graph_id in listed and graphml.startswith("<?xml") and "</graphml>" in graphml


# --- retries: a tiny fake transport -----------------------------------------------------------------


def _answers(*responses: httpx.Response) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    seen: list[httpx.Request] = []
    queue = list(responses)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return queue.pop(0)

    return httpx.MockTransport(handle), seen


RATE_LIMITED = {"error": {"code": "rate_limited", "message": "Too many requests.", "hint": "Wait.", "retry_after": 7}}
ANSWER = {
    "session_id": "s1",
    "message_id": "m1",
    "answer": "Error correction.",
    "evidence": [],
    "credits_charged": 3,
    "balance": 97,
}


def test_a_429_is_retried_after_retry_after_with_the_same_idempotency_key() -> None:
    transport, seen = _answers(
        httpx.Response(429, headers={"Retry-After": "2"}, json=RATE_LIMITED),
        httpx.Response(201, json=ANSWER),
    )
    slept: list[float] = []
    with Client("http://exo.test", api_key="exo_test_key", transport=transport, sleep=slept.append) as exo:
        answer = exo.chat.ask("What protects qubits?")
    assert answer.answer == "Error correction." and answer.credits_charged == 3
    assert slept == [2.0]  # the header's seconds
    keys = [r.headers.get("Idempotency-Key") for r in seen]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]  # one paid call, one key across its retries


def test_retries_are_bounded_and_the_last_429_is_raised_with_its_envelope() -> None:
    transport, seen = _answers(*[httpx.Response(429, headers={"Retry-After": "3600"}, json=RATE_LIMITED)] * 3)
    slept: list[float] = []
    with Client(
        "http://exo.test", api_key="exo_test_key", transport=transport, sleep=slept.append, max_retries=2
    ) as exo:
        with pytest.raises(RateLimitError) as limited:
            exo.balance()
    assert slept == [30.0, 30.0]  # Retry-After cut to max_retry_wait
    assert len(seen) == 3
    error = limited.value
    assert (error.status, error.code, error.hint, error.retry_after) == (429, "rate_limited", "Wait.", 3600.0)


def test_the_async_client_retries_a_503_without_retry_after_by_backoff() -> None:
    transport, seen = _answers(
        httpx.Response(503, json={"error": {"code": "server_busy", "message": "Busy.", "hint": ""}}),
        httpx.Response(200, json={"balance": 5, "held": 0, "plan": "free", "rate_limits": {}}),
    )
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def run() -> int:
        async with AsyncClient("http://exo.test", api_key="exo_test_key", transport=transport, sleep=sleep) as exo:
            return (await exo.balance()).balance

    assert asyncio.run(run()) == 5
    assert slept == [0.5] and len(seen) == 2
    assert "Idempotency-Key" not in seen[0].headers  # a free GET carries none


def test_waits_poll_until_done_and_raise_on_failure_or_timeout_in_both_clients() -> None:
    """The sync and async clients share the wait loops' rules (exograph_client._core.Deadline)."""
    processing, processed = {"id": "d1", "status": "processing"}, {"id": "d1", "status": "processed"}
    failed = {"id": "d1", "status": "failed", "failure": {"stage": "parse", "reason": "encrypted PDF"}}
    transport, seen = _answers(*(httpx.Response(200, json=body) for body in (processing, processed, failed)))
    slept: list[float] = []
    with Client("http://exo.test", api_key="exo_test_key", transport=transport, sleep=slept.append) as exo:
        assert exo.documents.wait_until_processed("d1", poll=0.25).status == "processed"
        assert slept == [0.25] and len(seen) == 2
        with pytest.raises(DocumentFailedError) as failure:
            exo.documents.wait_until_processed("d1")
        assert failure.value.code == "document_failed" and "encrypted PDF" in failure.value.message
        assert repr(exo) == "Client(base_url='http://exo.test', api_key='exo_***', scope=None)"
    running = {"id": "r1", "topic": "qubits", "status": "running"}
    transport, seen = _answers(httpx.Response(200, json=running))

    async def nap(seconds: float) -> None:
        raise AssertionError("no pause after the deadline")

    async def run() -> None:
        async with AsyncClient("http://exo.test", api_key="exo_test_key", transport=transport, sleep=nap) as exo:
            assert repr(exo) == "AsyncClient(base_url='http://exo.test', api_key='exo_***', scope=None)"
            with pytest.raises(WaitTimeoutError) as late:
                await exo.research.wait("r1", timeout=0)
            assert late.value.message == "The research session r1 is still running after 0 s."

    asyncio.run(run())
    assert len(seen) == 1


def test_a_file_uploads_by_path_and_again_as_bytes_unchanged(live_url, alice, alice_key, fund, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fund(alice, 100)
    notes = tmp_path / "notes.md"
    notes.write_text("# Lab notes\n\nMarie Curie measured radium in Paris.\n", encoding="utf-8")
    with Client(live_url, api_key=alice_key) as exo:
        graph = exo.graphs.create("Files")
        quote = exo.documents.quote(notes, graph_id=graph.id)
        assert quote.credits_needed > 0 and quote.covered
        first = exo.documents.upload(notes, graph_id=graph.id)  # multipart, the file's own name
        assert first.filename == "notes.md"
        assert exo.documents.wait_until_processed(first.id, timeout=120).status == "processed"
        again = exo.documents.upload(notes.read_bytes(), filename="notes.md", graph_id=graph.id)
        assert again.id == first.id and again.status == "unchanged"
