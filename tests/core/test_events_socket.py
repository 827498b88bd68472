"""/ws/events/ served by a real uvicorn with the real Redis channel layer (the session's embedded FalkorDB/Redis):
an idle socket stays open, and a reconnecting client catches up on the events it missed (issue 22 §3.2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from channels.layers import channel_layers
from django.conf import settings
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from exograph.core.events import user_event_send
from tests.live import LiveServer

pytestmark = pytest.mark.django_db(transaction=True)

IDLE_SECONDS = 120


@pytest.fixture
def live(transactional_db) -> Iterator[LiveServer]:  # type: ignore[no-untyped-def]
    # One server (one event loop) per test: the process-wide layer remembers the loop that received on it.
    channel_layers.backends.clear()
    server = LiveServer(lifespan="off")
    server.start()
    yield server
    server.stop()


def _socket(live: LiveServer, user: Any, query: str = "") -> ClientConnection:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    return connect(
        f"ws://127.0.0.1:{live.port}/ws/events/{query}",
        additional_headers={
            "Origin": f"http://127.0.0.1:{live.port}",
            "Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}",
        },
        open_timeout=10,
    )


def _next(ws: ClientConnection, *, timeout: float = 10) -> dict[str, Any]:
    return dict(json.loads(ws.recv(timeout=timeout)))


def _progress(user_id: int, doc: str, progress: int) -> None:
    user_event_send(user_id, {"type": "document.progress", "document": {"id": doc, "progress": progress}})


def test_idle_socket_stays_open_and_then_delivers(live, alice):
    """The old layer read BZPOPMIN (5 s) on a connection whose socket timeout was redis-py's default 5 s, so the
    consumer died with redis TimeoutError and the socket dropped within seconds of going idle."""
    with _socket(live, alice) as ws:
        try:
            message = ws.recv(timeout=IDLE_SECONDS)
        except TimeoutError:
            pass  # nothing to say while idle, and the socket is still there
        except ConnectionClosed as closed:
            pytest.fail(f"the idle socket was dropped: {closed!r}")
        else:
            pytest.fail(f"an unexpected message on an idle socket: {message!r}")
        _progress(alice.pk, "after-idle", 10)
        event = _next(ws)
    assert event["type"] == "document.progress" and event["document"]["id"] == "after-idle"
    assert event["id"]  # every live event carries its id, which a reconnecting client sends back


def test_reconnecting_client_catches_up_on_what_it_missed(live, alice, bob):
    with _socket(live, alice) as ws:
        _progress(alice.pk, "seen", 10)
        seen = _next(ws)
    # Sent while the page was away (the reconnect gap): kept for it, in order; bob's are not alice's.
    _progress(alice.pk, "missed-1", 20)
    _progress(bob.pk, "bobs", 99)
    user_event_send(alice.pk, {"type": "chat.token", "session_id": "s", "message_id": "m", "seq": 0, "text": "Hi"})
    with _socket(live, alice, f"?last_event_id={seen['id']}") as ws:
        replayed = [_next(ws), _next(ws), _next(ws)]
        _progress(alice.pk, "live", 40)
        live_event = _next(ws)
    assert [e["type"] for e in replayed] == ["document.progress", "chat.token", "events.replayed"]
    assert replayed[0]["document"]["id"] == "missed-1" and replayed[1]["text"] == "Hi"
    assert replayed[2]["complete"] is True and replayed[2]["count"] == 2
    ids = [seen["id"], replayed[0]["id"], replayed[1]["id"], live_event["id"]]
    assert len(set(ids)) == 4 and live_event["document"]["id"] == "live"


def test_a_client_too_far_behind_is_told_to_catch_up_from_rest(live, alice, settings):
    settings.EVENTS_REPLAY_MAX = 3
    with _socket(live, alice) as ws:
        _progress(alice.pk, "seen", 1)
        seen = _next(ws)
    for n in range(5):  # more than the replay buffer keeps
        _progress(alice.pk, f"missed-{n}", n)
    with _socket(live, alice, f"?last_event_id={seen['id']}") as ws:
        replayed = [_next(ws) for _ in range(4)]
    assert [e["document"]["id"] for e in replayed[:3]] == ["missed-2", "missed-3", "missed-4"]
    assert replayed[3] == {"type": "events.replayed", "count": 3, "complete": False}


def test_a_bad_last_event_id_is_ignored_not_fatal(live, alice):
    with _socket(live, alice, "?last_event_id=<script>") as ws:
        _progress(alice.pk, "fresh", 1)
        assert _next(ws)["document"]["id"] == "fresh"
