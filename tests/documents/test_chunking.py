"""Chunking: structure-aware, token-bounded, overlapping, stable ids, pages kept."""

from __future__ import annotations

from exograph.documents.chunking import TOKENS_PER_WORD, chunk_blocks
from exograph.documents.models import DocumentType
from exograph.documents.parsing import Block, document_text_extract
from tests.documents.conftest import fixture_bytes


def _pdf_blocks():
    return document_text_extract(
        data=fixture_bytes("pdf/tracemonkey-pldi-09.pdf"), content_type=DocumentType.PDF, pages=14
    ).blocks


def test_windows_are_bounded_and_overlap():
    words = [f"w{i}" for i in range(1000)]
    blocks = [Block(text=" ".join(words), page=3, kind="page")]
    chunks = chunk_blocks(document_id="doc", blocks=blocks, max_tokens=130, overlap_tokens=26)
    window = int(130 / TOKENS_PER_WORD)
    assert all(len(c.text.split()) <= window for c in chunks)
    first, second = chunks[0].text.split(), chunks[1].text.split()
    assert first[-20:] == second[:20]  # 26 tokens ≈ 20 words of overlap
    assert {c.page for c in chunks} == {3}
    joined = set()
    for c in chunks:
        joined.update(c.text.split())
    assert joined == set(words)  # nothing lost


def test_chunks_never_cross_pages_and_keep_page_numbers():
    chunks = chunk_blocks(document_id="doc", blocks=_pdf_blocks(), max_tokens=200, overlap_tokens=40)
    assert {c.page for c in chunks} == set(range(1, 15))
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    pages = [c.page for c in chunks]
    assert pages == sorted(pages)


def test_chunk_ids_are_stable_and_document_specific():
    blocks = _pdf_blocks()
    a = chunk_blocks(document_id="doc-1", blocks=blocks, max_tokens=200, overlap_tokens=40)
    b = chunk_blocks(document_id="doc-1", blocks=blocks, max_tokens=200, overlap_tokens=40)
    c = chunk_blocks(document_id="doc-2", blocks=blocks, max_tokens=200, overlap_tokens=40)
    assert [x.id for x in a] == [x.id for x in b]
    assert not {x.id for x in a} & {x.id for x in c}
    assert len({x.id for x in a}) == len(a)


def test_docx_chunks_follow_headings():
    blocks = document_text_extract(
        data=fixture_bytes("docx/poi_heading123.docx"), content_type=DocumentType.DOCX, pages=1
    ).blocks
    chunks = chunk_blocks(document_id="doc", blocks=blocks, max_tokens=200, overlap_tokens=40)
    headings = [c.heading for c in chunks]
    assert headings[0] == "First paragraph"
    assert "First paragraph › Second paragraph" in headings
    assert all(c.page == 1 for c in chunks)
