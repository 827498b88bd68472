"""Scope is shown in words plus an inline SVG icon (templates/_scope.html), never by an emoji alone: 🌐/🔒 render as
empty boxes where no emoji font is installed."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs.services import graph_create
from tests.graphs import conftest as graph_fixtures

pytestmark = pytest.mark.django_db
_drop_graph_stores = graph_fixtures._drop_graph_stores

EMOJI = ("\U0001f310", "\U0001f512")  # 🌐 🔒


def test_scope_badge_is_a_word_and_an_svg_icon() -> None:
    html = Template('{% load exograph_ui %}{% scope_badge "world" %}|{% scope_badge "private" %}').render(Context())
    world, private = html.split("|")
    assert 'class="scope scope-world"' in world and "<svg" in world and ">World<" in world
    assert 'class="scope scope-private"' in private and "<svg" in private and ">Private<" in private
    assert 'aria-hidden="true"' in world  # the word is what a screen reader reads
    assert not any(e in html for e in EMOJI)


def test_scope_word_for_options() -> None:
    html = Template("{% load exograph_ui %}{{ a|scope_word }} {{ b|scope_word }}").render(
        Context({"a": "world", "b": "private"})
    )
    assert html == "World Private"


@pytest.mark.parametrize("path", ["/", "/graphs/", "/documents/", "/research/", "/chat/", "/graphs/world/"])
def test_pages_show_scope_in_words_never_an_emoji(client, alice, path) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Mine", scope=Scope.PRIVATE)
    Document.objects.create(
        owner=alice,
        graph=graph,
        filename="a.txt",
        size=10,
        content_type="txt",
        pages=1,
        status=DocumentStatus.PROCESSED,
    )
    client.force_login(alice)
    html = client.get(path).content.decode()
    assert not any(e in html for e in EMOJI), path
    if path in ("/", "/graphs/", "/documents/"):
        assert 'class="scope scope-private"' in html and ">Private<" in html


def test_explorer_names_the_scope_in_words(client, alice) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Mine", scope=Scope.PRIVATE)
    client.force_login(alice)
    html = client.get(f"/graphs/{graph.id}/explore/").content.decode()
    assert not any(e in html for e in EMOJI)
    assert 'class="scope scope-private"' in html and "Mine (Private)</option>" in html
