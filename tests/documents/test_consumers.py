"""WebSocket /ws/documents/: session-authenticated, the owner's events only."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from channels.layers import get_channel_layer
from django.conf import settings
from django.test import Client

from exograph.asgi import application
from exograph.documents.events import user_group

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _in_memory_layer(settings):
    """The consumer logic over the in-memory layer; the Redis layer is covered by the pipeline progress test
    (redis-py turns the cancellation of a consumer's pending read into a TimeoutError at teardown)."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def _headers(user=None) -> list[tuple[bytes, bytes]]:
    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if user is not None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()))
    return headers


async def _session(headers, sends, path="/ws/documents/"):
    """A raw ASGI WebSocket session (channels.testing needs daphne, which is not installed)."""
    import json

    scope = {"type": "websocket", "path": path, "headers": headers, "subprotocols": [], "query_string": b""}
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "websocket.connect"})
    first = await communicator.receive_output(timeout=10)
    connected = first["type"] == "websocket.accept"
    code = first.get("code")
    received = []
    if connected:
        layer = get_channel_layer()
        for group, payload in sends:
            await layer.group_send(group, {"type": "document.progress", "document": payload})
        while not await communicator.receive_nothing(timeout=1.5):
            message = await communicator.receive_output(timeout=5)
            received.append(json.loads(message["text"]))
    # The client side of the close handshake, also after a refused connect, so the consumer ends cleanly.
    await communicator.send_input({"type": "websocket.disconnect", "code": 1000})
    await communicator.wait(timeout=10)
    return connected, code, received


def test_owner_receives_own_progress_only(alice, charlie):
    sends = [
        (user_group(alice.pk), {"id": "a-doc", "status": "processing", "progress": 40}),
        (user_group(charlie.pk), {"id": "c-doc", "status": "processing", "progress": 10}),
    ]
    connected, _, received = async_to_sync(_session)(_headers(alice), sends)
    assert connected
    assert [m["document"]["id"] for m in received] == ["a-doc"]
    assert received[0]["type"] == "document.progress"


def test_anonymous_socket_is_refused():
    connected, code, _ = async_to_sync(_session)(_headers(None), [])
    assert not connected
    assert code == 4401


@pytest.mark.parametrize("path", ["/ws/events/", "/ws/documents/"])
def test_events_socket_carries_typed_document_events_to_their_owner_only(alice, charlie, path):
    sends = [
        (user_group(alice.pk), {"id": "a-doc", "status": "processing", "progress": 40}),
        (user_group(charlie.pk), {"id": "c-doc", "status": "processing", "progress": 10}),
    ]
    connected, _, received = async_to_sync(_session)(_headers(alice), sends, path)
    assert connected
    assert [(m["type"], m["document"]["id"]) for m in received] == [("document.progress", "a-doc")]


def test_anonymous_events_socket_is_refused():
    connected, code, _ = async_to_sync(_session)(_headers(None), [], "/ws/events/")
    assert not connected
    assert code == 4401
