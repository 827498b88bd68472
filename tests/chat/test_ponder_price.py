"""On the offline reader (CHAT_PROVIDER=extractive, what `make run` serves) a ponder message is the same reader over
the same evidence as a snap one, so it is charged as snap; what the user is shown before sending (the web chat's
picker, a dry run's quote, the price list) says that price. With a language model ponder keeps its own price
(tests/chat/test_send_providers.py pins 10 with its checking pass)."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from billing.prices import chat_action, price_for, price_list
from billing.services import credit_balance

pytestmark = pytest.mark.django_db

MESSAGES = "/api/v1/chat/messages/"
QUESTION = "Which technique keeps qubits safe from decoherence?"


def test_offline_ponder_answers_as_snap_and_costs_what_snap_costs(alice, alice_client, alice_graph, fund):  # type: ignore[no-untyped-def]
    fund(alice, 50)
    snap_price = price_for("chat.snap")
    assert price_for("chat.ponder") != snap_price  # the table still has ponder's own (language model) price
    quote = alice_client.post(f"{MESSAGES}?dry_run=true", {"message": QUESTION, "model": "ponder"}, format="json")
    assert quote.json()["credits_needed"] == snap_price, quote.json()

    snap = alice_client.post(MESSAGES, {"message": QUESTION, "model": "snap"}, format="json").json()
    before = credit_balance(account=alice)
    ponder = alice_client.post(MESSAGES, {"message": QUESTION, "model": "ponder"}, format="json").json()
    assert ponder["answered"] is True and ponder["answer"] == snap["answer"]
    assert ponder["credits_charged"] == snap_price
    assert credit_balance(account=alice) == before - snap_price


def test_the_web_chat_picker_shows_the_price_a_message_is_charged(alice, alice_graph, settings):  # type: ignore[no-untyped-def]
    browser = Client()
    browser.force_login(alice)
    page = html.unescape(browser.get("/chat/").content.decode())
    assert f"Ponder (deep), {price_for('chat.snap')} credits" in page
    settings.CHAT_PROVIDER = "openai"
    page = html.unescape(browser.get("/chat/").content.decode())
    assert f"Ponder (deep), {price_for('chat.ponder')} credits" in page


def test_the_price_list_names_both_ponder_prices_offline_and_one_with_a_model(settings) -> None:  # type: ignore[no-untyped-def]
    offline = {row["action"]: row["cost"] for row in price_list()}["chat.ponder"]
    assert offline.startswith(f"{price_for('chat.snap')} on the offline reader")
    assert f"({price_for('chat.ponder')} with a language model)" in offline
    settings.CHAT_PROVIDER = "anthropic"
    assert chat_action("ponder") == "chat.ponder"
    assert {row["action"]: row["cost"] for row in price_list()}["chat.ponder"] == str(price_for("chat.ponder"))
