"""The report's exports render what came from outside (topic, titles, findings, questions) as text: raw HTML
or a Markdown link in a topic or title never reaches a Markdown renderer as HTML or a link; DOCX takes any text."""

from __future__ import annotations

import io
import re

import pytest

from research.models import ResearchSession, ResearchStatus
from research.services import research_export_docx, research_export_markdown

pytestmark = pytest.mark.django_db

HOSTILE_TOPIC = "<img src=x onerror=alert(1)> & <script>alert(2)</script>"
HOSTILE_TITLE = "Click [here](javascript:alert(document.cookie)) <b>now</b>"


def _completed(owner, *, topic: str = HOSTILE_TOPIC) -> ResearchSession:  # type: ignore[no-untyped-def]
    return ResearchSession.objects.create(
        owner=owner,
        topic=topic,
        budget_credits=30,
        status=ResearchStatus.COMPLETED,
        note="Read <iframe src=//evil>",
        report={
            "summary": f"Found 0 academic papers and 1 technical article on {topic}.",
            "findings": [
                {
                    "text": "Safe *claim* with ![x](https://evil.example/t.png) and `code`\n# not a heading",
                    "citations": [1],
                }
            ],
            "open_questions": [f"How does “{HOSTILE_TITLE}” [1] bear on it?"],
            "sources": [
                {
                    "number": 1,
                    "title": HOSTILE_TITLE,
                    "url": "javascript:alert(1)",
                    "kind": "article",
                    "published": None,
                },
                {"number": 2, "title": "Fine", "url": "https://ok.example/a_(b)", "kind": "paper", "published": None},
            ],
        },
    )


def test_markdown_export_renders_outside_text_as_text_never_as_html_or_links(alice):
    markdown_it = pytest.importorskip("markdown_it")
    text = research_export_markdown(session=_completed(alice))
    html = markdown_it.MarkdownIt("commonmark").render(text)  # raw HTML allowed, as most renderers do
    assert "<img" not in html and "<script" not in html and "<iframe" not in html and "<b>" not in html
    assert "javascript:" not in re.sub(r"[^<]*", "", html)  # in no tag or attribute
    assert not re.search(r'href="(?!#source-\d+"|https://ok\.example/)', html)
    tags = set(re.findall(r"<(\w+)", html))
    assert tags <= {"h1", "h2", "p", "ul", "li", "a", "em"}, tags  # em: our italic note
    assert html.count("<h1>") == 1  # the finding's "# not a heading" stays inside its item
    # the text still reads as written
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; &lt;script&gt;" in html
    assert 'href="https://ok.example/a_%28b%29"' in html and 'href="#source-1"' in html


def test_docx_export_takes_control_characters_and_hostile_text(alice):
    from docx import Document as DocxDocument

    session = _completed(alice, topic="bell\x07 tab\x0b <b>x</b>")
    paragraphs = [p.text for p in DocxDocument(io.BytesIO(research_export_docx(session=session))).paragraphs]
    assert paragraphs[0] == "bell tab <b>x</b>"
    assert any(HOSTILE_TITLE in p for p in paragraphs)


def test_report_page_escapes_outside_text_and_links_only_http_sources(alice):
    from django.test import Client

    session = _completed(alice)
    client = Client()
    client.force_login(alice)
    page = client.get(f"/research/{session.id}/").content.decode()
    assert "<img src=x" not in page and "<script>alert" not in page and "<b>now</b>" not in page
    assert 'href="javascript:' not in page.replace(" ", "")
    assert 'href="https://ok.example/a_(b)"' in page
