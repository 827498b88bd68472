"""A text or Markdown note saved under a generic file name ("notes.txt", "New Text Document.txt") is titled by the
heading it opens with, as a PDF is by its /Title; a descriptive file name, a given title or a note without an
opening heading keeps what it had."""

from __future__ import annotations

import base64

import pytest

from exograph.documents.models import Document

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

URL = "/api/v1/documents/"
RULES = "# Wrekin Wheelers rules\n\nRiders meet at the Buckatree car park at nine on Sundays.\n"


def _send(client, text: str, filename: str, **extra: object):  # type: ignore[no-untyped-def]
    body = {"file_content_base64": base64.b64encode(text.encode()).decode(), "filename": filename, **extra}
    return client.post(URL, body, format="json")


@pytest.mark.parametrize("filename", ["notes.txt", "document.md", "untitled.txt", "New Text Document.txt"])
def test_a_generic_note_name_gives_way_to_its_opening_heading(alice_client, funded, filename):  # type: ignore[no-untyped-def]
    response = _send(alice_client, RULES, filename)
    assert response.status_code == 201, response.json()
    assert response.json()["title"] == "Wrekin Wheelers rules" and response.json()["filename"] == filename
    assert Document.objects.get(pk=response.json()["id"]).title == "Wrekin Wheelers rules"


def test_a_descriptive_name_a_given_title_and_a_headless_note_keep_theirs(alice_client, funded):  # type: ignore[no-untyped-def]
    assert _send(alice_client, RULES, "club-rules-2026.md").json()["title"] == "club-rules-2026.md"
    given = _send(alice_client, RULES.replace("nine", "ten"), "notes.txt", title="Rules, my copy").json()
    assert given["title"] == "Rules, my copy"
    headless = "Riders meet at the Buckatree car park.\n\n# Later section\n"
    assert _send(alice_client, headless, "notes.txt").json()["title"] == "notes.txt"


def test_which_opening_lines_are_headings():  # type: ignore[no-untyped-def]
    from exograph.documents.titles import text_heading

    assert text_heading("\n\n## **Ride calendar** ##\nbody") == "Ride calendar"
    assert text_heading("Ride calendar\n=============\nbody") == "Ride calendar"
    assert text_heading("#hashtag is not a heading\n") == ""
    assert text_heading("First paragraph.\n\n# Heading later") == ""
    assert text_heading("# Notes\n") == "Notes"  # metadata_title then refuses a generic heading
