"""The web chat, live, on a question the documents do not answer: the page says so and that nothing was charged,
as the same answer reloaded from the server does ('Not in your documents', credits refunded), never 'Answered'."""

from __future__ import annotations

import pytest

from tests.e2e.test_browser import (  # noqa: F401 (fixtures: live_server_url, quantum_doc, write_doc, _drop_graph_stores)
    CHROMIUM,
    CHROMIUM_ARGS,
    _drop_graph_stores,
    _logged_in_page,
    live_server_url,
    quantum_doc,
    write_doc,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_question_the_documents_do_not_answer_is_shown_as_such_and_free(live_server_url, quantum_doc) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from playwright.sync_api import expect, sync_playwright

    from billing.services import credit_balance

    dana, _graph, _document = quantum_doc
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = _logged_in_page(browser, live_server_url, dana)
            page.goto(f"{live_server_url}/chat/")
            page.get_by_label("Your question").fill("Which bakery in Tarnhaven sells rye bread?")
            page.get_by_label("Your question").press("Enter")
            answer = page.locator("#chat-log .msg.assistant").last
            expect(answer.locator(".meta")).to_contain_text("Support", timeout=60_000)
            expect(answer.locator(".meta .badge")).to_have_text("Not in your documents")
            expect(answer.locator(".meta")).to_contain_text("(refunded)")
            status = page.locator("#chat-status")
            expect(status).to_contain_text("not charged")
            assert "Answered" not in status.inner_text()
            expect(page.locator("#chat-balance")).to_have_text("100")
            page.reload()  # the server's rendering of the same answer says the same
            expect(page.locator("#chat-log .msg.assistant .meta .badge").last).to_have_text("Not in your documents")
        finally:
            browser.close()
    assert credit_balance(account=dana) == 100
