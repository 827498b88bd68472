"""Every flow a newcomer has, on the service exactly as `make run` serves it (tests/e2e/embedded.py).

One `scripts/run.py` per module: SQLite, embedded FalkorDB/Redis, one Celery worker, beat and uvicorn, none of
CI's DATABASE_URL/REDIS_URL. A new user signs up on the web form, follows the verification link the console
email backend printed, makes an API key, uploads a PDF, a DOCX and a text (each quoted with dry_run first, then
charged exactly that), searches, explores, chats with the rag and graph engines, runs a research session to its
report, exports it, records a watch topic and has it run the way beat starts it, sees a read-only key refused
on a paid call, and deletes the account. REST with httpx, MCP over stdio (`exograph-mcp`) and over streamable
HTTP (/mcp, the official SDK client), and one step in a real browser.

The steps run in order and share one journey; each waits with a deadline and says what it waited for. The
document text and the questions are this suite's own: they paraphrase the documents instead of quoting them.
"""

from __future__ import annotations

import asyncio
import base64
import io
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.documents.conftest import fixtures_dir
from tests.e2e.embedded import MakeRun, embedded_env, until
from tests.mcp.conftest import mcp_http, mcp_stdio, text_of

pytestmark = pytest.mark.embedded

PASSWORD = "quillmoor-harbour-lights-77"  # noqa: S105 (test account of a throwaway service)
EMAIL = "newcomer@example.org"
PDF = "pdf/pm_naacl06-shinyama.pdf"  # 8 pages: a paper on discovering relations without a fixed scenario
DOCX = "docx/poi_IllustrativeCases.docx"  # worked examples of a budget's effect on named taxpayers
TEXT_TITLE = "The Harbour Lights of Quillmoor"
TEXT = """# The Harbour Lights of Quillmoor

Quillmoor is a fishing town on the estuary of the River Brennock. Its copper lighthouse, the Tarrant Beacon,
was designed by the engineer Oswin Tarrant and first lit in 1911.

Oswin Tarrant learned his trade in Glasgow under the shipwright Mirela Vance. After a storm in 1909 sank three
trawlers off Skelly Point, the council of Quillmoor asked Tarrant for a light that sailors could see from twenty
miles out at sea.

The beacon burns paraffin inside a rotating lens cast by the Dunmore Glassworks. Agnes Pollard kept the light
from 1911 until 1940 and wrote down every vessel that rounded Skelly Point in her logbook.
"""
# Deadlines of one upload's processing and one research session on a loaded 2-core machine.
PROCESS_SECONDS = 420
RESEARCH_SECONDS = 420
# Polls stay well under the plan's 60 requests a minute (free reads count too).
POLL_SECONDS = 3.0


class Journey:
    """What the steps hand on to each other, and how long each took."""

    def __init__(self, run: MakeRun) -> None:
        self.run = run
        self.base = run.base
        self.web = httpx.Client(base_url=run.base, timeout=60, follow_redirects=False)
        self.key = ""
        self.balance = 0
        self.docs: dict[str, dict[str, Any]] = {}  # "pdf" | "docx" | "text" -> the processed document
        self.research: dict[str, Any] = {}
        self.rag_answer: dict[str, Any] = {}
        self.entity = ""  # an entity of the PDF, found by search, opened in the explorer
        self.timings: list[tuple[str, float]] = []

    def api(self, key: str | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.base}/api/v1", headers={"Authorization": f"Bearer {key or self.key}"}, timeout=300
        )

    def form(self, path: str, data: dict[str, str]) -> httpx.Response:
        """A POST of a web form as the browser sends it (CSRF token from the page, Referer of the page)."""
        page = self.web.get(path)
        assert page.status_code == 200, (path, page.status_code)
        token = self.web.cookies["csrftoken"]
        return self.web.post(
            path, data={**data, "csrfmiddlewaretoken": token}, headers={"Referer": f"{self.base}{path}"}
        )

    def needs(self, *what: str) -> None:
        missing = [name for name in what if not getattr(self, name)]
        if missing:
            pytest.fail(f"an earlier step did not leave {missing}: see its failure above")


@pytest.fixture(scope="module")
def journey(request: pytest.FixtureRequest) -> Iterator[Journey]:
    started = time.monotonic()
    run = MakeRun(embedded_env()).start()
    journey = Journey(run)
    try:
        run.wait_ready(timeout=180)
        journey.timings.append(("make run ready", time.monotonic() - started))
        yield journey
    finally:
        out = run.stop()
        total = time.monotonic() - started
        steps = ", ".join(f"{name} {seconds:.0f}s" for name, seconds in journey.timings)
        capture = request.config.pluginmanager.get_plugin("capturemanager")
        with capture.global_and_fixture_disabled():
            print(f"\nembedded product suite: {total:.0f}s in all ({steps})")
        assert "Traceback" not in out or request.session.testsfailed, _tracebacks(out)


def _tracebacks(out: str) -> str:
    return "the service logged a traceback:\n" + "\n".join(
        out[m.start() : m.start() + 3000] for m in re.finditer("Traceback", out)
    )


@pytest.fixture
def step(journey: Journey, request: pytest.FixtureRequest) -> Iterator[Journey]:
    started = time.monotonic()
    yield journey
    journey.timings.append((request.node.name.removeprefix("test_"), time.monotonic() - started))


def _processed(api: httpx.Client, document_id: str) -> dict[str, Any] | None:
    doc = api.get(f"/documents/{document_id}/").json()
    assert doc["status"] != "failed", doc
    return doc if doc["status"] == "processed" else None


def _charges(api: httpx.Client) -> list[dict[str, Any]]:
    return [e for e in api.get("/billing/ledger", params={"limit": 100}).json()["results"] if e["amount"] < 0]


def _balance(api: httpx.Client) -> int:
    return int(api.get("/billing/balance").json()["balance"])


# --- signup, verification, key ----------------------------------------------------------------------------------


def test_signup_verify_by_the_emailed_link_and_make_a_key(step: Journey) -> None:
    j = step
    signed_up = j.form("/signup/", {"email": EMAIL, "password": PASSWORD, "password_confirm": PASSWORD})
    assert signed_up.status_code == 302, signed_up.text[:2000]
    # The console email backend (the embedded default) prints the message in the worker's log, under make run's.
    link = until(
        lambda: re.findall(r"https?://\S+/account/verify/\S+/", j.run.output()),
        timeout=60,
        what="the verification email in make run's output",
    )[-1]
    # The link names the server make run serves (its port, not a default 8000 nobody listens on).
    assert link.startswith(f"{j.run.base}/account/verify/"), (link, j.run.base)
    verified = j.web.get(link.removeprefix(j.run.base))
    assert verified.status_code == 302, verified.text[:2000]
    assert "verified" in j.web.get(verified.headers["location"]).text
    # Signing up logged this web client in: the explorer page and account deletion below use its session.
    created = j.form("/account/keys/", {"name": "newcomer laptop"})
    assert created.status_code == 200
    j.key = re.findall(r"exo_[0-9a-f]+_[A-Za-z0-9_-]+", created.text)[0]
    with j.api() as api:
        me = api.get("/me/")
        assert me.status_code == 200 and me.json()["email"] == EMAIL
        j.balance = _balance(api)
    assert j.balance > 0, "verification grants the free credits"


# --- uploads: quoted, then charged exactly that -------------------------------------------------------------------


def _quote_upload(api: httpx.Client, **body: Any) -> int:
    quote = api.post("/documents/", json={**body, "dry_run": True})
    assert quote.status_code == 200, quote.text
    assert quote.json()["covered"] is True and quote.json()["duplicate_of"] is None, quote.json()
    return int(quote.json()["credits_needed"])


def _sent_as_quoted(api: httpx.Client, body: dict[str, Any], quoted: int) -> str:
    """POST the upload the quote was for; it charges the quoted credits at once. Returns the document id."""
    sent = api.post("/documents/", json=body)
    assert sent.status_code == 201, sent.text
    assert sent.json()["credits_charged"] == quoted, sent.json()
    return str(sent.json()["id"])


def _processed_and_charged(j: Journey, api: httpx.Client, doc_id: str, quoted: int, what: str) -> dict[str, Any]:
    """Wait for the document; processing charged nothing more and refunded nothing: one ledger charge per upload."""
    doc = until(
        lambda: _processed(api, doc_id), timeout=PROCESS_SECONDS, what=f"the {what} processed", every=POLL_SECONDS
    )
    assert doc["chunk_count"] > 0 and doc["entity_count"] > 0, doc
    j.balance -= quoted
    assert _balance(api) == j.balance
    charges = _charges(api)
    assert len(charges) == len(j.docs) + 1 and charges[0]["amount"] == -quoted, charges
    return doc


def test_upload_a_pdf_over_rest_charged_as_quoted(step: Journey) -> None:
    j = step
    j.needs("key")
    encoded = base64.b64encode((fixtures_dir() / PDF).read_bytes()).decode()
    body = {"file_content_base64": encoded, "filename": "relation-discovery.pdf"}
    with j.api() as api:
        quoted = _quote_upload(api, **body)
        assert _balance(api) == j.balance, "a quote charges nothing"
        doc_id = _sent_as_quoted(api, body, quoted)
        j.docs["pdf"] = _processed_and_charged(j, api, doc_id, quoted, "PDF")


def test_upload_a_docx_over_mcp_stdio_charged_as_quoted(step: Journey, tmp_path) -> None:  # type: ignore[no-untyped-def]
    j = step
    j.needs("key")
    path = tmp_path / "budget-cases.docx"
    path.write_bytes((fixtures_dir() / DOCX).read_bytes())
    with j.api() as api:
        quoted = _quote_upload(
            api, file_content_base64=base64.b64encode(path.read_bytes()).decode(), filename=path.name
        )

    async def upload() -> Any:
        async with mcp_stdio(j.base, key=j.key, EXOGRAPH_MCP_UPLOAD_WAIT_SECONDS=str(PROCESS_SECONDS)) as mcp:
            tools = {tool.name for tool in (await mcp.list_tools()).tools}
            assert {"upload_document", "search_entities", "send_chat_message"} <= tools, tools
            return await mcp.call_tool("upload_document", {"file_path": str(path)})

    result = asyncio.run(upload())
    assert not result.is_error, text_of(result)
    with j.api() as api:
        listed = api.get("/documents/").json()["results"]
        doc_id = next(d["id"] for d in listed if d["filename"] == path.name)
        j.docs["docx"] = _processed_and_charged(j, api, doc_id, quoted, "DOCX")


def test_upload_a_text_into_the_world_graph_charged_as_quoted(step: Journey) -> None:
    j = step
    j.needs("key")
    body = {"text": TEXT, "title": TEXT_TITLE, "graph_scope": "world"}
    with j.api() as api:
        quoted = _quote_upload(api, **body)
        doc_id = _sent_as_quoted(api, body, quoted)
        assert api.get(f"/documents/{doc_id}/").json()["scope"] == "world"
        j.docs["text"] = _processed_and_charged(j, api, doc_id, quoted, "text")


# --- search and explorer ---------------------------------------------------------------------------------------------


def test_search_over_rest_and_mcp_stdio_finds_each_document(step: Journey) -> None:
    j = step
    j.needs("key", "docs")
    with j.api() as api:
        found = api.get("/entities/search", params={"query": "Oswin Tarrant", "graph_scope": "world"})
        assert found.status_code == 200, found.text
        assert any("Tarrant" in r["name"] for r in found.json()["results"]), found.json()
        # The paper's authors, asked for by one of their names: the explorer step opens the best hit.
        private = api.get("/entities/search", params={"query": "Sekine", "graph_scope": "private"})
        assert private.status_code == 200, private.text
        hits = [r for r in private.json()["results"] if "Sekine" in r["name"]]
        assert hits, private.json()
        j.entity = hits[0]["name"]

    async def search() -> str:
        async with mcp_stdio(j.base, key=j.key) as mcp:
            result = await mcp.call_tool("search_entities", {"query": "Patrick", "graph_scope": "private"})
            assert not result.is_error, text_of(result)
            return text_of(result)

    assert "Patrick" in asyncio.run(search())


def test_explorer_world_entity_graph_explore_and_page(step: Journey) -> None:
    j = step
    j.needs("key", "docs", "entity")
    with j.api() as api:
        world = api.get("/world/entities/Oswin Tarrant/", params={"evidence": "true"})
        assert world.status_code == 200, world.text
        related = str(world.json())
        assert "Quillmoor" in related or "Tarrant Beacon" in related, world.json()
        graph_id = j.docs["pdf"]["graph_id"]
        explored = api.get(f"/graphs/{graph_id}/explore/", params={"entity": j.entity})
        assert explored.status_code == 200, explored.text
        assert len(explored.json()["nodes"]) > 1 and explored.json()["edges"], explored.json()
    page = j.web.get(f"/graphs/{graph_id}/explore/")
    assert page.status_code == 200 and "Entity" in page.text
    assert j.web.get("/graphs/world/Oswin Tarrant/").status_code == 200


# --- chat: rag and graph, each citing the right document --------------------------------------------------------------


def _ask(api: httpx.Client, **body: Any) -> dict[str, Any]:
    sent = api.post("/chat/messages/", json={"model": "snap", **body})
    assert sent.status_code == 201, sent.text
    return dict(sent.json())


def _cited_documents(answer: dict[str, Any]) -> set[str]:
    return {e["document_id"] for e in answer["evidence"] if e.get("document_id")}


def test_chat_rag_cites_the_docx(step: Journey) -> None:
    j = step
    j.needs("key", "docs")
    with j.api() as api:
        answer = _ask(
            api, message="What does the waiter who is paid by the hour gain from the Budget?", reasoning_engine="rag"
        )
        j.balance -= answer["credits_charged"]
        assert _balance(api) == j.balance
    assert answer["answered"] and answer["credits_charged"] == 3, answer
    assert j.docs["docx"]["id"] in _cited_documents(answer), answer["evidence"]
    assert any("waiter" in e["text"] for e in answer["evidence"]), answer["evidence"]
    j.rag_answer = answer


def test_chat_rag_answer_gives_the_waiters_own_gain(step: Journey) -> None:
    j = step
    j.needs("rag_answer")
    assert "825" in j.rag_answer["answer"] and "970" not in j.rag_answer["answer"], j.rag_answer["answer"]


def test_chat_graph_cites_the_text(step: Journey) -> None:
    j = step
    j.needs("key", "docs")
    with j.api() as api:
        answer = _ask(
            api,
            message="Who drew up the plans for the copper light at the mouth of the Brennock?",
            reasoning_engine="graph",
            graph_scope="world",
        )
        assert answer["answered"] and answer["credits_charged"] == 3, answer
        assert j.docs["text"]["id"] in _cited_documents(answer), answer["evidence"]
        assert "Tarrant" in answer["answer"], answer["answer"]
        j.balance -= 3
        assert _balance(api) == j.balance


def test_chat_over_hosted_mcp_cites_the_pdf(step: Journey) -> None:
    j = step
    j.needs("key", "docs")

    async def ask() -> Any:
        async with mcp_http(f"{j.base}/mcp", key=j.key) as mcp:
            return await mcp.call_tool(
                "send_chat_message",
                {
                    "message": "Which university do the two authors of the relation discovery paper work at?",
                    "reasoning_engine": "rag",
                },
            )

    result = asyncio.run(ask())
    assert not result.is_error, text_of(result)
    reply = result.structured_content or {}
    evidence = reply.get("evidence") or reply.get("sources") or []
    assert j.docs["pdf"]["id"] in str(evidence) or "relation-discovery.pdf" in text_of(result), text_of(result)
    assert "New York University" in text_of(result)
    j.balance -= 3
    with j.api() as api:
        assert _balance(api) == j.balance


# --- research, export, watch -----------------------------------------------------------------------------------------


def _finished(api: httpx.Client, session_id: str) -> dict[str, Any] | None:
    session = api.get(f"/research/{session_id}/").json()
    return session if session["status"] not in ("pending", "running") else None


def test_research_completes_with_a_report_citing_the_text(step: Journey) -> None:
    j = step
    j.needs("key", "docs")
    with j.api() as api:
        started = api.post("/research/", json={"query": "the copper lighthouse of Quillmoor and the people behind it"})
        assert started.status_code == 202, started.text
        session = until(
            lambda: _finished(api, started.json()["id"]),
            timeout=RESEARCH_SECONDS,
            what="the research session",
            every=POLL_SECONDS,
        )
        assert session["status"] == "completed", session
        report = session["report"]
        assert report["findings"], report
        titles = [s["title"] for s in report["sources"]]
        assert TEXT_TITLE in titles, titles
        assert any("Tarrant" in f["text"] for f in report["findings"]), report["findings"]
        assert 0 < session["credits_spent"] <= session["credits_held"]
        j.balance -= session["credits_spent"]
        j.timings.append((f"(research spent {session['credits_spent']})", 0))
        assert _balance(api) == j.balance, "the unspent part of the hold came back"
    j.research = session


def test_research_exports_markdown_and_docx(step: Journey) -> None:
    j = step
    j.needs("key", "research")
    with j.api() as api:
        md = api.get(f"/research/{j.research['id']}/export/", params={"format": "md"})
        assert md.status_code == 200, md.text
        assert "Quillmoor" in md.text and TEXT_TITLE in md.text, md.text[:2000]
        docx_export = api.get(f"/research/{j.research['id']}/export/", params={"format": "docx"})
        assert docx_export.status_code == 200, docx_export.text[:500]
    import docx

    text = "\n".join(p.text for p in docx.Document(io.BytesIO(docx_export.content)).paragraphs)
    assert "Quillmoor" in text and TEXT_TITLE in text, text[:2000]


def test_watch_topic_is_recorded_and_runs_when_beat_sends_its_task(step: Journey) -> None:
    j = step
    j.needs("key", "research")
    with j.api() as api:
        created = api.post("/research/", json={"query": "harbour lights along the Brennock", "watch": "weekly"})
        assert created.status_code == 202, created.text
        topic_id = created.json()["id"]
        topic = until(
            lambda: _finished(api, topic_id),
            timeout=RESEARCH_SECONDS,
            what="the watch topic's first run",
            every=POLL_SECONDS,
        )
        assert topic["status"] == "completed" and topic["watch"] == "weekly", topic
        j.balance -= topic["credits_spent"]
        assert _balance(api) == j.balance
        j.timings.append((f"(watch topic spent {topic['credits_spent']}, balance {j.balance})", 0))
    # A week later, as beat would: the topic's next run is due, and beat sends its schedule entry's task.
    j.run.manage(
        "shell",
        "-c",
        "from datetime import timedelta\n"
        "from django.conf import settings\n"
        "from django.utils import timezone\n"
        "from exograph.celery import app\n"
        "from research.models import ResearchSession\n"
        f"topic = ResearchSession.objects.get(pk='{topic_id}')\n"
        "assert topic.next_run_at > timezone.now() + timedelta(days=6), topic.next_run_at\n"
        "ResearchSession.objects.filter(pk=topic.pk).update(next_run_at=timezone.now() - timedelta(minutes=1))\n"
        "entry = settings.CELERY_BEAT_SCHEDULE['research-watch-due']\n"
        "app.send_task(entry['task'], **entry.get('options', {}))\n",
    )
    with j.api() as api:

        def run_of_topic() -> dict[str, Any] | None:
            runs = [s for s in api.get("/research/").json()["results"] if s.get("watch_of") == topic_id]
            return runs[0] if runs and runs[0]["status"] not in ("pending", "running") else None

        run = until(run_of_topic, timeout=RESEARCH_SECONDS, what="the watch topic's due run", every=POLL_SECONDS)
        assert run["status"] == "completed", run
        j.balance -= run["credits_spent"]
        assert _balance(api) == j.balance


# --- the browser, a read-only key, deleting the account -----------------------------------------------------------


@pytest.mark.browser
def test_browser_login_shows_the_documents(step: Journey, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect, sync_playwright

    from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS

    j = step
    j.needs("docs")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(j.base + "/login/")
            page.get_by_label("Email").fill(EMAIL)
            page.get_by_label("Password").fill(PASSWORD)
            page.get_by_role("button", name=re.compile("Log in|Sign in", re.I)).click()
            expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
            page.goto(j.base + "/documents/")
            # The private uploads, and the sources the research sessions read into their own graphs (the text
            # itself went to the world graph).
            expect(page.locator("#documents tbody tr[data-id]").first).to_be_visible()
            for name in ("relation-discovery.pdf", "budget-cases.docx"):
                expect(page.locator("#documents")).to_contain_text(name)
            page.screenshot(path=str(tmp_path / "documents.png"), full_page=True)
            assert not errors, errors
        finally:
            browser.close()


def test_read_only_key_is_refused_a_paid_call(step: Journey) -> None:
    j = step
    j.needs("key")
    with j.api() as api:
        made = api.post("/keys/", json={"name": "reader", "read_only": True})
        assert made.status_code == 201, made.text
        reader = made.json()["key"]
    with j.api(reader) as api:
        assert api.get("/entities/search", params={"query": "Quillmoor", "graph_scope": "world"}).status_code == 200
        refused = api.post("/chat/messages/", json={"message": "Who kept the light?", "reasoning_engine": "rag"})
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "key_read_only", refused.json()
        assert _balance(api) == j.balance, "a refused call charges nothing"


def test_account_deletion_then_the_key_is_refused(step: Journey) -> None:
    j = step
    j.needs("key")
    deleted = j.form("/account/delete/", {"password": PASSWORD})
    assert deleted.status_code == 302, deleted.text[:2000]
    with j.api() as api:
        assert api.get("/me/").status_code == 401
        assert api.get("/documents/").status_code == 401
