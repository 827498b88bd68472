"""The documents list and the dashboard name a document by its title when it has one (a note's opening heading
in place of "notes.md", a PDF's /Title in place of "document.pdf"), with the file name beside it; a document
with no title of its own is named by its file name alone, as before."""

from __future__ import annotations

import pytest

from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentStatus
from exograph.graphs.services import graph_create

pytestmark = pytest.mark.django_db


def _document(owner, graph, filename: str, title: str) -> Document:  # type: ignore[no-untyped-def]
    return Document.objects.create(
        owner=owner,
        graph=graph,
        filename=filename,
        title=title,
        size=300,
        content_type="markdown",
        pages=1,
        status=DocumentStatus.PROCESSED,
        credits_charged=6,
        sha256=filename.encode().hex().ljust(64, "0")[:64],
    )


@pytest.mark.parametrize("path", ["/documents/", "/"])
def test_a_titled_document_is_listed_by_its_title_with_its_file_name(client, alice, path):  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Club", scope=Scope.PRIVATE)
    titled = _document(alice, graph, "notes.md", "Wrekin Wheelers rules")
    plain = _document(alice, graph, "orchard-minutes.md", "")
    client.force_login(alice)
    html = client.get(path).content.decode()
    assert f'<a href="/documents/{titled.id}/">Wrekin Wheelers rules</a> <span class="help">notes.md</span>' in html
    assert f'<a href="/documents/{plain.id}/">orchard-minutes.md</a> ' in html
