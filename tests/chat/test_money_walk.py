"""The walk of a paid request through the code: its money is decided and moved once, by its use case's service.

A profiler (sys.setprofile) follows one REST upload and one chat message from the view's `post` down, and records
every call that crosses into billing from project code outside it (and every call billing makes back up into a
feature or a door). The door's Meter only reads dry_run and the Idempotency-Key and stores the answer: it moves
no credits. The use case's service charges, once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

import pytest

from exograph.chat.api import ChatMessageCreateApi
from exograph.core.scope import Scope
from exograph.documents.api import DocumentListCreateApi
from exograph.graphs.services import graph_create
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db

FEATURES = {"documents", "chat", "research", "graphs"}
VALUES = {"Spent", "Quote", "ChargeResult"}  # billing's value objects: building one moves no credits
# A balance read; checking and naming a key; naming the price-table key a chat model is charged under.
NOT_MONEY = {"credit_balance", "_check_key", "ledger_key", "chat_action"}


def _room(module: str) -> str | None:
    """billing, research, or exograph's app (documents, chat, core, ...); None outside the project (and tests)."""
    top, _, rest = module.partition(".")
    if top in ("billing", "research"):
        return top
    if top == "exograph":
        return rest.partition(".")[0] or "exograph"
    return None


@dataclass
class Walk:
    entries: list[tuple[str, str]] = field(default_factory=list)  # (caller module, billing callee) from outside
    climbs: list[tuple[str, str]] = field(default_factory=list)  # (billing caller module, feature/door callee)
    inner: list[tuple[str, str]] = field(default_factory=list)  # (billing caller module, billing callee)

    def money(self, calls: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The calls that decide or move credits: billing.services/prices functions, not value objects, the balance
        read or the key helpers."""
        return [
            (caller, callee.rpartition(":")[2])
            for caller, callee in calls
            if callee.startswith(("billing.services", "billing.prices"))
            and callee.rpartition(":")[2].split(".")[0] not in VALUES | NOT_MONEY
        ]


def walk_of(view_code: CodeType, call: Callable[[], Any]) -> tuple[Walk, Any]:
    """Run `call`, recording the crossings made while `view_code` (a view's post) runs."""
    walk = Walk()
    depth = 0

    def caller_of(frame: FrameType) -> str | None:
        up = frame.f_back
        while up is not None and _room(up.f_globals.get("__name__", "")) is None:
            up = up.f_back
        return up.f_globals.get("__name__", "") if up is not None else None

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal depth
        if frame.f_code is view_code:
            depth += 1 if event == "call" else -1 if event == "return" else 0
            return
        if event != "call" or depth <= 0:
            return
        module = frame.f_globals.get("__name__", "")
        to_room = _room(module)
        if to_room is None:
            return
        caller = caller_of(frame)
        if caller is None:
            return
        owner = frame.f_locals.get("self")  # a method: name it by its class (a dataclass's __init__ too)
        name = f"{type(owner).__name__}.{frame.f_code.co_name}" if owner is not None else frame.f_code.co_qualname
        callee = f"{module}:{name}"
        from_room = _room(caller)
        if to_room == "billing" and from_room != "billing":
            walk.entries.append((caller, callee))
        elif from_room == "billing" and to_room == "billing":
            walk.inner.append((caller, callee))
        elif from_room == "billing" and to_room in FEATURES | {"research"}:
            walk.climbs.append((caller, callee))

    sys.setprofile(profile)
    try:
        result = call()
    finally:
        sys.setprofile(None)
    return walk, result


def _door_only(walk: Walk, door: str) -> None:
    metering = [(caller, callee) for caller, callee in walk.entries if callee.startswith("billing.metering:Meter.")]
    assert metering and {caller for caller, _ in metering} == {door}, metering
    # The door's Meter moves no credits: nothing in billing.metering calls billing's money services.
    assert walk.money([(c, callee) for c, callee in walk.inner if c == "billing.metering"]) == [], walk.inner
    # One climb back up: Meter.run calling the door's work (which calls the service), nothing else.
    assert len(walk.climbs) == 1 and walk.climbs[0][0] == "billing.metering", walk.climbs
    assert walk.climbs[0][1].startswith(f"{door}:"), walk.climbs


def test_an_upload_enters_billings_money_once_from_its_service(alice, alice_client, fund):
    fund(alice, 100)
    walk, response = walk_of(
        DocumentListCreateApi.post.__code__,
        lambda: alice_client.post(
            "/api/v1/documents/",
            {"text": "The delta is fed by two rivers.", "title": "Rivers"},
            format="json",
            HTTP_IDEMPOTENCY_KEY="walk-upload",
        ),
    )
    assert response.status_code == 201, response.content
    assert response.json()["credits_charged"] == 6
    assert walk.money(walk.entries) == [("exograph.documents.services.upload", "credits_charge")], walk.entries
    _door_only(walk, "exograph.documents.api")


def test_a_chat_message_enters_billings_money_once_from_its_service(alice, alice_client, fund, write_doc):
    fund(alice, 100)
    graph = graph_create(actor=alice, name="Quantum notes", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    walk, response = walk_of(
        ChatMessageCreateApi.post.__code__,
        lambda: alice_client.post(
            "/api/v1/chat/messages/",
            {"message": "What protects qubits from noise?", "reasoning_engine": "rag"},
            format="json",
            HTTP_IDEMPOTENCY_KEY="walk-chat",
        ),
    )
    assert response.status_code == 201, response.content
    assert response.json()["credits_charged"] == 3 and response.json()["answered"] is True
    assert walk.money(walk.entries) == [("exograph.chat.metered", "credits_charge")], walk.entries
    _door_only(walk, "exograph.chat.api")
