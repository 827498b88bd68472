"""The web UI in a real browser: Playwright driving Debian's Chromium against the real ASGI app (uvicorn).

Flow: sign up -> verify the email (the link from the outbox) -> create an API key -> upload a PDF and watch
its progress reach processed -> explore an entity and expand it -> ask a chat question and watch the cited
answer stream in over the events socket -> buy a credit pack (fake Stripe + a signed webhook) and see the
balance change. Every page: no console errors, no failed requests; a screenshot each.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from django.core import mail

from exograph.accounts.models import User
from exograph.graphs import store
from exograph.graphs.models import Graph
from tests.billing.conftest import FakeStripe, completed_session, event, sign
from tests.documents.conftest import fixtures_dir
from tests.graphs import conftest as graph_fixtures
from tests.live import free_port

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
PASSWORD = "a-long-browser-password-9"  # noqa: S105 (test account)
write_doc = graph_fixtures.write_doc  # a fixture: a small document written straight into a graph store
_drop_graph_stores = graph_fixtures._drop_graph_stores  # autouse: the graph stores a test wrote are dropped


@pytest.fixture
def live_server_url(settings, monkeypatch) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The real ASGI app (HTTP + /ws/events/) served by uvicorn in a thread of this process (eager Celery)."""
    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still sync.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings.EXOGRAPH_PUBLIC_URL = base
    from exograph.asgi import application

    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=port, log_level="warning", lifespan="off", log_config=None)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline:
            raise AssertionError("uvicorn did not start")
        time.sleep(0.05)
    yield base
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def stripe_on(settings) -> Iterator[FakeStripe]:  # type: ignore[no-untyped-def]
    fake = FakeStripe()
    settings.STRIPE_SECRET_KEY = "sk_test_fake"
    settings.USE_STRIPE = True
    settings.STRIPE_WEBHOOK_SECRET = "whsec_browser"  # noqa: S105
    settings.STRIPE_API_BASE = fake.url
    yield fake
    fake.close()


class PageWatch:
    """Collects console errors and failed requests of a page and, per step, saves a full-page screenshot, runs
    axe-core and looks for clipped elements. Screenshots go to $EXOGRAPH_BROWSER_ARTIFACTS/<test> when it is set
    (CI keeps that directory), else to the test's tmp_path."""

    def __init__(self, page, out: Path) -> None:  # type: ignore[no-untyped-def]
        if os.environ.get("EXOGRAPH_BROWSER_ARTIFACTS"):
            test = os.environ.get("PYTEST_CURRENT_TEST", "browser").split(" ")[0].split("::")[-1]
            out = Path(os.environ["EXOGRAPH_BROWSER_ARTIFACTS"]) / re.sub(r"[^\w.-]+", "_", test)
            out.mkdir(parents=True, exist_ok=True)
        self.page, self.out, self.problems, self.shots = page, out, [], []
        page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: self._failed(r))
        page.on(
            "response",
            lambda r: r.status >= 400 and "/static/" in r.url and self.problems.append(f"{r.status} {r.url}"),
        )

    def _failed(self, request) -> None:  # type: ignore[no-untyped-def]
        # The real Stripe page is not reachable here (routed below); a navigation aborts requests still in flight
        # (net::ERR_ABORTED): neither is a broken page. Missing files show up as 4xx responses instead.
        if "checkout.stripe.com" not in request.url and "ERR_ABORTED" not in str(request.failure):
            self.problems.append(f"failed request: {request.url} {request.failure}")

    def shot(self, name: str) -> None:
        path = self.out / f"{len(list(self.out.glob('*.png'))):02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        self.shots.append(path)
        self.problems.extend(axe_violations(self.page))
        self.problems.extend(f"{self.page.url}: clipped {e}" for e in self.page.evaluate(TOO_WIDE_JS))
        assert not self.problems, (name, self.problems)


AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"


def axe_violations(page) -> list[str]:  # type: ignore[no-untyped-def]
    """axe-core (npm, pinned) on the page as it is now: its serious and critical violations, one line each. The
    script is evaluated through the DevTools protocol, which the page's CSP does not govern (no inline script)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    found = page.evaluate(
        """async () => {
          const result = await axe.run(document, {resultTypes: ['violations']});
          return result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
            .map(v => `axe ${v.impact} ${v.id}: ${v.help} (${v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': ' + (n.any[0] ? n.any[0].message : '')).join('; ')})`);
        }"""
    )
    return [f"{page.url}: {line}" for line in found]


def _an_entity_with_relations(user: User) -> str:
    for graph in Graph.objects.filter(owner=user):
        rows = store.ro_query(
            graph.store_name,
            "MATCH (e:Entity)-[r]-(:Entity) WITH e, count(r) AS n RETURN e.name ORDER BY n DESC, e.name LIMIT 1",
        )
        if rows:
            return str(rows[0][0])
    raise AssertionError("the upload produced no related entities")


@pytest.mark.parametrize("width", [1280])
def test_signup_key_upload_explore_and_buy_in_a_real_browser(live_server_url, stripe_on, tmp_path, width) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect, sync_playwright

    base = live_server_url
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            # Eager Celery runs the whole ingest inside the upload request, on a shared 2-core machine.
            page.set_default_timeout(180_000)
            watch = PageWatch(page, tmp_path)

            page.goto(base + "/")
            expect(page.get_by_role("heading", level=1)).to_contain_text("knowledge graph")
            watch.shot("landing")

            page.goto(base + "/signup/")
            page.get_by_label("Email").fill("erin@example.com")
            page.get_by_label("Password", exact=True).fill(PASSWORD)
            page.get_by_label("Confirm password").fill(PASSWORD)
            page.get_by_role("button", name=re.compile("Sign up|Create", re.I)).click()
            expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
            watch.shot("dashboard-new")

            link = next(m for m in re.findall(r"https?://\S+/account/verify/\S+/", mail.outbox[-1].body))
            page.goto(base + link[link.index("/account/verify/") :])
            expect(page.locator("#dashboard-balance")).not_to_contain_text(re.compile(r"^0 "))
            erin = User.objects.get(email="erin@example.com")

            page.goto(base + "/account/keys/")
            page.get_by_label("Name").fill("laptop")
            page.get_by_role("button", name="Create key").click()
            expect(page.locator("#new-key")).to_contain_text("exo_")
            watch.shot("api-key")

            page.goto(base + "/documents/")
            page.set_input_files("#id_file", str(fixtures_dir() / "pdf" / "pm_naacl06-shinyama.pdf"))
            expect(page.get_by_label("Graph", exact=True)).to_be_visible()  # the target-graph picker
            page.get_by_role("button", name="Upload", exact=True).click()
            # The price first (pages, credits, balance after); nothing is charged before Confirm.
            expect(page.locator("#upload-quote")).to_contain_text("Balance after")
            expect(page.locator("#quote-pages")).to_contain_text("page")
            watch.shot("upload-quote")
            page.locator("#upload-confirm").click()
            row = page.locator("#documents tbody tr[data-id]").first
            expect(row.locator(".badge")).to_have_text("processed", timeout=120_000)
            expect(row.locator("progress")).to_have_attribute("value", "100")
            watch.shot("documents")

            entity = _an_entity_with_relations(erin)
            page.goto(base + "/graphs/")
            watch.shot("graphs")
            page.locator("table").get_by_role("link", name="Explore", exact=True).first.click()
            page.get_by_label("Entity").fill(entity)
            page.get_by_label("Entity").press("Enter")
            expect(page.locator("#panel-title")).to_have_text(entity, timeout=30_000)
            expect(page.locator("#panel-sources li").first).to_be_visible()
            before = page.evaluate("document.querySelectorAll('#panel-neighbours li').length")
            assert before >= 1
            page.locator("#panel-neighbours button").first.click()
            expect(page.locator("#explore-status")).not_to_contain_text("Loading", timeout=30_000)
            watch.shot("explorer")

            # Chat: the answer streams over /ws/events/ (chat.token frames), then shows its citations.
            frames: list[str] = []
            page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
            page.get_by_role("navigation", name="Main").get_by_role("link", name="Chat").click()
            expect(page.get_by_role("heading", level=1)).to_have_text("Chat")
            page.get_by_label("Engine").select_option("graph")
            page.get_by_label("Your question").fill("What is unrestricted relation discovery?")
            page.get_by_label("Your question").press("Enter")
            answer = page.locator("#chat-log .msg.assistant").last
            expect(answer.locator(".meta")).to_contain_text("Support", timeout=60_000)
            expect(answer.locator("a.cite").first).to_be_visible()
            expect(page).to_have_url(re.compile(r"/chat/[0-9a-f-]{36}/$"))
            session_id = page.url.rstrip("/").rsplit("/", 1)[-1]
            streamed = [f for f in frames if '"chat.token"' in f and session_id in f]
            assert streamed, frames
            assert any('"chat.done"' in f and session_id in f for f in frames), frames
            answer.locator("a.cite").first.click()
            cited = answer.locator(".evidence details[open]").first
            expect(cited.locator("blockquote")).to_be_visible()
            expect(cited.get_by_role("link", name="Open the document")).to_have_attribute(
                "href", re.compile(r"^/documents/[0-9a-f-]{36}/\?(page=\d+&)?chunk=")
            )
            expect(page.locator("#session-list li.current a")).to_have_text("What is unrestricted relation discovery?")
            expect(page.locator("#chat-balance")).not_to_have_text("")
            watch.shot("chat")
            page.reload()
            expect(page.locator("#chat-log .msg.assistant a.cite").first).to_be_visible()
            chat_path = f"/chat/{session_id}/"

            # The citation opens the PDF itself (pdf.js, text layer on) at the cited page, the passage highlighted
            # in the page's text layer and marked in the text beside it.
            answer = page.locator("#chat-log .msg.assistant").last
            answer.locator("a.cite").first.click()
            cited = answer.locator(".evidence details[open]").first
            quoted = cited.locator("blockquote").inner_text()
            href = cited.get_by_role("link", name="Open the document").get_attribute("href") or ""
            cited.get_by_role("link", name="Open the document").click()
            number = re.search(r"[?&]page=(\d+)", href)
            expect(page.locator("#pdf-page")).to_have_attribute("data-rendered", number.group(1) if number else "1")
            expect(page.locator("#pdf-heading")).to_contain_text(f"PDF page {number.group(1) if number else 1}")
            highlighted = page.locator("#pdf-text .pdf-cited")
            expect(highlighted.first).to_be_attached()
            assert page.locator("#pdf-canvas").evaluate("c => c.width > 300 && c.height > 300")
            marked = page.locator(".chunk.cited mark").inner_text()
            pdf_words = set(re.findall(r"[a-z]{4,}", " ".join(highlighted.all_inner_texts()).lower()))
            quote_words = set(re.findall(r"[a-z]{4,}", quoted.lower())) & set(re.findall(r"[a-z]{4,}", marked.lower()))
            assert len(pdf_words & quote_words) >= min(5, len(quote_words)), (pdf_words, quote_words)
            expect(page.locator("#pdf-status")).to_contain_text("highlighted")
            watch.shot("viewer-pdf")
            viewer_path = page.url[len(base) :]
            # The keyboard turns the pages: the pager's links, Enter on "next" (on the last page "previous") draws
            # that page.
            shown = int(number.group(1)) if number else 1
            forward = page.locator("#pdf-next").count() == 1
            page.locator("#pdf-next" if forward else "#pdf-prev").focus()
            page.keyboard.press("Enter")
            expect(page.locator("#pdf-page")).to_have_attribute("data-rendered", str(shown + (1 if forward else -1)))

            # Research: start a session with a budget; eager Celery runs it (local source) inside the request,
            # then the page shows it completed with its report and the unspent credits back.
            page.get_by_role("navigation", name="Main").get_by_role("link", name="Research").click()
            page.get_by_label("Topic").fill("relation discovery")
            page.get_by_label("Budget (credits)").fill("40")
            page.get_by_role("button", name="Start research").click()
            expect(page).to_have_url(re.compile(r"/research/[0-9a-f-]{36}/$"))
            expect(page.locator('[data-field="status"]')).to_have_text("completed", timeout=120_000)
            expect(page.locator("#report")).to_contain_text("Found")
            watch.shot("research")

            page.goto(base + "/billing/")
            balance = int(page.locator("#balance").inner_text())
            # The real Stripe Checkout page is not reachable: let our server answer, keep its redirect target
            # (Playwright does not route a redirect's next hop), and show a stand-in page.
            redirects: list[str] = []

            def to_stripe(route) -> None:  # type: ignore[no-untyped-def]
                response = route.fetch(max_redirects=0)
                redirects.append(response.headers.get("location", ""))
                route.fulfill(status=200, content_type="text/html", body="<p>Stripe Checkout stand-in</p>")

            page.route("**/billing/checkout/", to_stripe)
            page.locator("#buy-pack_500").click()
            expect(page.locator("p")).to_have_text("Stripe Checkout stand-in")
            assert redirects and redirects[0].startswith("https://checkout.stripe.com/"), redirects
            session_id = redirects[0].rsplit("/", 1)[-1]
            payload = event("checkout.session.completed", completed_session(session_id, user=erin))
            delivered = httpx.post(
                base + "/api/v1/billing/webhooks/stripe/",
                content=payload,
                headers={"Stripe-Signature": sign(payload, secret="whsec_browser"), "Content-Type": "application/json"},  # noqa: S106
            )
            assert delivered.status_code == 200, delivered.text
            page.goto(base + "/billing/?checkout=success")
            expect(page.locator("#balance")).to_have_text(str(balance + 500))
            watch.shot("billing")

            for path in ["/", "/graphs/search/", "/graphs/world/", "/mcp-setup/"]:
                page.goto(base + path)
                watch.shot(path.strip("/").replace("/", "-") or "dashboard")
            page.set_viewport_size({"width": 360, "height": 780})
            for path in ["/", "/documents/", chat_path, "/research/", "/billing/", viewer_path]:
                page.goto(base + path)
                if path == viewer_path:  # the PDF page drawn to the phone's width, the passage still highlighted
                    expect(page.locator("#pdf-text .pdf-cited").first).to_be_attached()
                watch.shot("phone-" + (path.strip("/").split("/")[0] or "dashboard"))
                wide = page.evaluate(
                    "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 361"
                    " && !e.closest('.table-wrap, .menu')).map(e => e.tagName + '.' + e.className).slice(0, 5)"
                )
                assert page.evaluate("document.documentElement.scrollWidth") <= 360, (path, wide)
        finally:
            browser.close()
    print("screenshots:", *watch.shots, sep="\n  ")


# The explorer's provenance and a citation's way into the document viewer, on a graph written directly (fast).
QUANTUM_DOC_TEXTS = [
    "Quantum computing uses qubits to run algorithms such as Shor's algorithm.",
    "Quantum error correction protects qubits from noise and decoherence.",
]


@pytest.fixture
def quantum_doc(write_doc):  # type: ignore[no-untyped-def]
    """dana's processed 2-page document (page i+1 holds QUANTUM_DOC_TEXTS[i]) in her private graph, 100 credits."""
    from billing.services import credits_grant_admin
    from exograph.core.scope import Scope
    from exograph.documents.models import Document, DocumentStatus
    from exograph.graphs.services import graph_create
    from tests.factories import UserFactory
    from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS

    dana = UserFactory(email="dana@example.com")
    credits_grant_admin(account=dana, amount=100, actor=None, note="tests")
    graph = graph_create(actor=dana, name="Quantum", scope=Scope.PRIVATE)
    document = Document.objects.create(
        owner=dana, graph=graph, filename="quantum.pdf", size=1000, content_type="pdf", pages=2,
        status=DocumentStatus.PROCESSED, credits_charged=7, entity_count=4, relation_count=3,
    )  # fmt: skip
    write_doc(
        graph, dana, texts=QUANTUM_DOC_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS,
        filename="quantum.pdf", document_id=str(document.id),
    )  # fmt: skip
    return dana, graph, document


def _logged_in_page(browser, base: str, user: User):  # type: ignore[no-untyped-def]
    from django.test import Client

    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": base}])
    page = context.new_page()
    page.set_default_timeout(60_000)
    return page


def _panel_shows(page, name: str, passages: list[str]) -> None:  # type: ignore[no-untyped-def]
    """The explorer's panel is titled `name` and lists exactly `passages` (any order)."""
    from playwright.sync_api import expect

    expect(page.locator("#panel-title")).to_have_text(name)
    expect(page.locator("#panel-passages q")).to_have_count(len(passages))
    shown = [text.strip() for text in page.locator("#panel-passages li q").all_inner_texts()]
    assert sorted(shown) == sorted(passages), (name, shown)


def test_explorer_panel_shows_the_selected_entitys_own_passages(live_server_url, quantum_doc, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 27: selecting a node already on the canvas changed the title but kept the previous passages."""
    from playwright.sync_api import expect, sync_playwright

    dana, graph, document = quantum_doc
    computing, correction = QUANTUM_DOC_TEXTS
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = _logged_in_page(browser, live_server_url, dana)
            watch = PageWatch(page, tmp_path)
            page.goto(f"{live_server_url}/graphs/{graph.id}/explore/")
            page.get_by_label("Entity").fill("Quantum computing")
            page.get_by_label("Entity").press("Enter")
            _panel_shows(page, "Quantum computing", [computing])
            # B (Qubit) is on the canvas; selecting it expands it and shows its passages (both chunks name it).
            page.locator("#panel-neighbours button", has_text="Qubit").click()
            _panel_shows(page, "Qubit", [computing, correction])
            # Back to A, already expanded on the canvas: its own passages, not Qubit's.
            page.locator("#panel-neighbours button", has_text="Quantum computing").click()
            _panel_shows(page, "Quantum computing", [computing])
            # A node expanded by a 2-hop read but never its centre: its passages are fetched, not left as A's.
            page.get_by_label("Hops").select_option("2")
            page.get_by_label("Entity").fill("Quantum error correction")
            page.get_by_label("Entity").press("Enter")
            _panel_shows(page, "Quantum error correction", [correction])
            page.locator("#panel-neighbours button", has_text="Qubit").click()
            _panel_shows(page, "Qubit", [computing, correction])
            # A passage opens the document viewer at its page with the passage marked.
            link = page.locator("#panel-passages li", has_text="decoherence").get_by_role("link")
            expect(link).to_have_attribute("href", re.compile(rf"^/documents/{document.id}/\?page=2&chunk="))
            watch.shot("explorer-reselect")
            link.click()
            expect(page.locator("#text-heading")).to_contain_text("Page 2")
            expect(page.locator(".chunk.cited mark")).to_have_text(correction)
            watch.shot("viewer-from-explorer")
        finally:
            browser.close()


def test_a_chat_citation_opens_the_viewer_at_the_passage(live_server_url, quantum_doc, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect, sync_playwright

    dana, graph, document = quantum_doc
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = _logged_in_page(browser, live_server_url, dana)
            watch = PageWatch(page, tmp_path)
            page.goto(f"{live_server_url}/chat/")
            page.get_by_label("Engine").select_option("rag")
            page.get_by_label("Your question").fill("What protects qubits from noise and decoherence?")
            page.get_by_label("Your question").press("Enter")
            answer = page.locator("#chat-log .msg.assistant").last
            expect(answer.locator(".meta")).to_contain_text("Support", timeout=60_000)
            answer.locator("a.cite").first.click()
            cited = answer.locator(".evidence details[open]").first
            link = cited.get_by_role("link", name="Open the document")
            expect(link).to_have_attribute("href", re.compile(rf"^/documents/{document.id}/\?page=\d&chunk="))
            href = link.get_attribute("href") or ""
            number = int(re.search(r"page=(\d)", href).group(1))  # type: ignore[union-attr]
            quoted = cited.locator("blockquote").inner_text()
            watch.shot("chat-citation")
            link.click()
            expect(page).to_have_url(re.compile(rf"/documents/{document.id}/\?page={number}&chunk="))
            expect(page.locator("#text-heading")).to_contain_text(f"Page {number}")
            mark = page.locator(".chunk.cited mark")
            expect(mark).to_have_text(QUANTUM_DOC_TEXTS[number - 1])
            expect(mark).to_be_in_viewport()
            assert quoted.strip() in QUANTUM_DOC_TEXTS[number - 1] or QUANTUM_DOC_TEXTS[number - 1] in quoted
            expect(page.locator(".chunk.cited")).to_be_focused()
            watch.shot("viewer-from-chat")
            page.set_viewport_size({"width": 360, "height": 780})
            page.reload()
            expect(page.locator(".chunk.cited mark")).to_be_in_viewport()
            assert page.evaluate("document.documentElement.scrollWidth") <= 360
            watch.shot("phone-viewer")
        finally:
            browser.close()


# Phones: every page at 360 px, nothing wider than its scroll container (clipped or scrolling sideways), no
# console errors, the nav folded behind a keyboard-usable menu button; screenshots for people to look at.
PHONE_PAGES = ["/", "/documents/", "/graphs/", "/account/keys/", "/chat/", "/research/", "/billing/", "/mcp-setup/"]
TOO_WIDE_JS = """() => {
  const out = [];
  const width = document.documentElement.clientWidth;
  for (const e of document.querySelectorAll('body *')) {
    // visually hidden (the skip link until focused, a stacked table's head); code blocks scroll by design
    if (e.closest('.sr-only, .skip, table.stack thead, pre, script, #cy')) continue;
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    let c = e.parentElement;
    while (c && c !== document.body && !/(auto|scroll|hidden|clip)/.test(getComputedStyle(c).overflowX)) c = c.parentElement;
    const box = c && c !== document.body ? c.getBoundingClientRect() : {left: 0, right: width};
    if (r.right > box.right + 1 || r.left < box.left - 1) {
      out.push(`${e.tagName}.${e.className} [${Math.round(r.left)}, ${Math.round(r.right)}] in ` +
               `${c && c !== document.body ? c.tagName + '.' + c.className : 'page'} [${Math.round(box.left)}, ${Math.round(box.right)}]`);
    }
  }
  return out.slice(0, 8);
}"""


def _fits(page, path: str) -> None:  # type: ignore[no-untyped-def]
    too_wide = page.evaluate(TOO_WIDE_JS)
    assert not too_wide, (path, too_wide)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360, path
    assert "{#" not in page.inner_text("body") and "{%" not in page.inner_text("body"), path  # no template leaks


def test_every_page_fits_a_360px_phone(live_server_url, quantum_doc, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect, sync_playwright

    from exograph.accounts.services import api_key_create
    from exograph.chat.models import ChatMessage, ChatRole, ChatSession

    dana, graph, document = quantum_doc
    api_key_create(actor=dana, name="a laptop key with a rather long name", monthly_credit_cap=50)
    session = ChatSession.objects.create(owner=dana, title="What protects qubits from noise and decoherence?")
    ChatMessage.objects.create(session=session, role=ChatRole.USER, content="What protects qubits from noise?")
    ChatMessage.objects.create(session=session, role=ChatRole.ASSISTANT, content="Quantum error correction [1].")
    base = live_server_url
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            anonymous = browser.new_page(viewport={"width": 360, "height": 780})
            watch = PageWatch(anonymous, tmp_path)
            anonymous.goto(base + "/")
            watch.shot("phone-landing")
            _fits(anonymous, "landing")

            page = _logged_in_page(browser, base, dana)
            page.set_viewport_size({"width": 360, "height": 780})
            watch = PageWatch(page, tmp_path)
            paths = [*PHONE_PAGES, f"/chat/{session.id}/", f"/graphs/{graph.id}/explore/", f"/documents/{document.id}/"]
            for path in paths:
                page.goto(base + path)
                nav = page.get_by_role("navigation", name="Main")
                expect(nav).to_be_hidden()  # folded behind the menu button
                watch.shot("phone-" + (path.strip("/").replace("/", "-")[:40] or "dashboard"))
                _fits(page, path)

            # The menu button opens the nav from the keyboard and Escape closes it, focus back on the button.
            page.goto(base + "/documents/")
            toggle = page.get_by_role("button", name="Menu")
            expect(toggle).to_have_attribute("aria-expanded", "false")
            toggle.focus()
            page.keyboard.press("Enter")
            expect(toggle).to_have_attribute("aria-expanded", "true")
            expect(page.get_by_role("navigation", name="Main").get_by_role("button", name="Log out")).to_be_visible()
            watch.shot("phone-menu-open")
            _fits(page, "menu open")
            page.keyboard.press("Tab")
            page.keyboard.press("Escape")
            expect(toggle).to_have_attribute("aria-expanded", "false")
            expect(toggle).to_be_focused()
            expect(page.get_by_role("navigation", name="Main")).to_be_hidden()

            # The upload's quote step fits too.
            notes = tmp_path / "notes.txt"
            notes.write_text("Quantum error correction protects qubits from noise.\n")
            page.set_input_files("#id_file", str(notes))
            page.get_by_role("button", name="Upload", exact=True).click()
            expect(page.locator("#upload-confirm")).to_be_visible()
            watch.shot("phone-upload-quote")
            _fits(page, "upload quote")

            # Tables are stacked cards: each cell carries its column's name.
            cell = page.locator("#documents tbody td[data-label='Status']").first
            assert page.evaluate("e => getComputedStyle(e).display", cell.element_handle()) == "block"
            assert page.evaluate("e => getComputedStyle(e, '::before').content", cell.element_handle()) == '"Status"'

            page.set_viewport_size({"width": 1280, "height": 900})  # the wide layout: no menu button, nav shown
            expect(toggle).to_be_hidden()
            expect(page.get_by_role("navigation", name="Main")).to_be_visible()
        finally:
            browser.close()
    print("screenshots:", *watch.shots, sep="\n  ")


def _until_equal(page, expression: str, wanted: object, seconds: float = 10) -> None:  # type: ignore[no-untyped-def]
    """Wait until page.evaluate(expression) == wanted (wait_for_function needs eval, which the CSP refuses)."""
    deadline = time.monotonic() + seconds
    while (value := page.evaluate(expression)) != wanted and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert value == wanted, (expression, value)


def test_explorer_colours_entities_by_type_filters_them_and_draws_generic_relations_faint(  # type: ignore[no-untyped-def]
    live_server_url, write_doc, tmp_path
) -> None:
    """Issue 27: no legend, no colour by type, no type filter; 'related to' labels piled in the middle."""
    from playwright.sync_api import expect, sync_playwright

    from exograph.core.scope import Scope
    from exograph.graphs.services import graph_create
    from tests.factories import UserFactory

    erin = UserFactory(email="erin-explorer@example.com")
    graph = graph_create(actor=erin, name="People", scope=Scope.PRIVATE)
    write_doc(
        graph, erin,
        texts=["Marie Curie worked in Paris at the Sorbonne.", "Marie Curie studied radioactivity in Paris."],
        entities=[("Marie Curie", "PERSON", ""), ("Paris", "LOCATION", ""), ("Sorbonne", "ORGANIZATION", ""),
                  ("radioactivity", "CONCEPT", "")],
        relations=[("Marie Curie", "WORKED_AT", "Sorbonne"), ("Marie Curie", "RELATED_TO", "Paris"),
                   ("Marie Curie", "STUDIED", "radioactivity")],
    )  # fmt: skip
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = _logged_in_page(browser, live_server_url, erin)
            watch = PageWatch(page, tmp_path)
            page.goto(f"{live_server_url}/graphs/{graph.id}/explore/")
            cy = "document.getElementById('cy')._cyreg.cy"
            # With no entity asked for, the overview: every entity here (4 of 4), laid out by fcose, listed as
            # buttons (the keyboard's way in): Enter on one opens it in the panel.
            expect(page.locator("#cy")).to_have_attribute("data-nodes", "4")
            assert (
                page.evaluate(
                    f"{cy}.nodes().map(n => Math.round(n.position('x'))).filter((x, i, a) => a.indexOf(x) === i).length"
                )
                > 1
            )
            expect(page.locator("#explore-status")).to_contain_text("the 4 most connected of 4 entities")
            watch.shot("explorer-overview")
            page.locator("#overview-list button", has_text="Marie Curie").focus()
            page.keyboard.press("Enter")
            expect(page.locator("#panel-title")).to_have_text("Marie Curie")
            expect(page.locator("#panel-neighbours button").first).to_be_visible()
            page.get_by_label("Entity").fill("Marie Curie")
            page.get_by_label("Entity").press("Enter")
            # The panel already shows her (from the list): wait for this read's own result, not for the title.
            expect(page.locator("#explore-status")).to_contain_text("Marie Curie: 4 entities")
            expect(page.locator("#panel-title")).to_have_text("Marie Curie")
            legend = page.locator("#entity-legend")
            for name in ("Person (1)", "Location (1)", "Organization (1)", "Concept (1)"):
                expect(legend).to_contain_text(name)
            colours = page.evaluate(
                f"Object.fromEntries({cy}.nodes().map(n => [n.data('etype'), n.style('background-color')]))"
            )
            assert colours["PERSON"] == "rgb(232,89,12)" and colours["LOCATION"] == "rgb(47,158,68)", colours
            assert len(set(colours.values())) == 4, colours  # one colour per type
            # The legend's swatch has the canvas colour of its type.
            swatch = page.locator("#entity-legend .type-swatch.type-location")
            assert swatch.evaluate("e => getComputedStyle(e).backgroundColor").replace(" ", "") == colours["LOCATION"]
            # Generic relations: faint and unlabelled until hovered; named ones keep their label.
            labels = page.evaluate(
                f"Object.fromEntries({cy}.edges().map(e => [e.data('type'), [e.style('label'), e.hasClass('generic')]]))"
            )
            assert labels["related_to"] == ["", True] and labels["worked_at"] == ["worked at (1)", False], labels
            hovered = page.evaluate(
                f"(() => {{ const e = {cy}.edges('.generic')[0]; e.emit('mouseover'); return e.style('label'); }})()"
            )
            assert hovered == "related to (1)", hovered
            watch.shot("explorer-legend")
            # Unticking a type hides its nodes (and their relations); ticking it brings them back.
            page.locator("#entity-filter-location").uncheck()
            _until_equal(page, f"{cy}.nodes(':visible').length", 3)
            visible = page.evaluate(f"{cy}.nodes(':visible').map(n => n.data('etype')).sort()")
            assert visible == ["CONCEPT", "ORGANIZATION", "PERSON"], visible
            page.locator("#entity-filter-location").check()
            _until_equal(page, f"{cy}.nodes(':visible').length", 4)
            watch.shot("explorer-filtered")
        finally:
            browser.close()
