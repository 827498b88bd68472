"""Parsing in the sandbox, on every fixture file (normal and awkward) and on hostile generated ones."""

from __future__ import annotations

import pytest

from exograph.documents import parse_worker
from exograph.documents.models import DocumentType
from exograph.documents.parsing import ParseFailed, document_inspect, document_text_extract
from tests.documents.conftest import (
    W_NS,
    docx_bytes,
    docx_declaring_pages,
    five_letter_paragraphs,
    fixture_bytes,
    many_pages_pdf,
)

READABLE_PDFS = {
    "pdf/tracemonkey-pldi-09.pdf": 14,
    "pdf/sf_pdflatex-4-pages.pdf": 4,
    "pdf/sf_multicolumn.pdf": 3,
    "pdf/sf_GeoTopo-komprimiert.pdf": 117,
    "pdf/pm_naacl06-shinyama.pdf": 8,
    "pdf/pm_i1040nr.pdf": 50,
    "pdf/pm_dmca.pdf": 18,  # RC4-encrypted with an empty user password
    "pdf/pp_r6-owner-password.pdf": 1,  # AES-256 r6, empty user password
    "pdf/pp_Seige_of_Vicksburg_Sample_OCR.pdf": 6,  # scans with an OCR text layer
    "pdf/pm_zen_of_python_corrupted.pdf": 1,  # corrupted Flate stream, recoverable
    "pdf/pp_multilang.pdf": 1,
    "pdf/sf_habibi.pdf": 1,
    "pdf/pdfjs_issue16063.pdf": 1,
    "pdf/pdfjs_issue11656.pdf": 1,
    "pdf/pdfjs_issue13211.pdf": 1,
    "pdf/pm_jo.pdf": 1,  # pypdf gives mojibake; pdfium reads it (tests/documents/test_coverage.py)
    "pdf/pm_simple1.pdf": 1,  # no valid xref: pypdf refuses it, pdfium opens it
    "pdf/oc_c02-22.pdf": 1,  # image-only: read by OCR (test_coverage.py)
    "pdf/oc_multipage.pdf": 6,  # image-only
}


@pytest.mark.parametrize(("name", "pages"), sorted(READABLE_PDFS.items()))
def test_readable_pdfs_inspect_to_their_page_count(name, pages):
    result = document_inspect(data=fixture_bytes(name), content_type=DocumentType.PDF)
    assert result.pages == pages
    assert result.pages_estimated is False


def test_pdf_text_keeps_page_numbers():
    result = document_text_extract(
        data=fixture_bytes("pdf/tracemonkey-pldi-09.pdf"), content_type=DocumentType.PDF, pages=14
    )
    pages = [block.page for block in result.blocks]
    assert pages == sorted(pages) and pages[0] == 1 and pages[-1] == 14
    assert "Trace" in result.blocks[0].text
    assert any("TraceMonkey" in block.text for block in result.blocks)


def test_a_word_hyphenated_at_a_line_end_is_joined_with_or_without_spaces_around_the_break():
    from exograph.documents.parse_pdf import text_clean

    assert text_clean("the ferry was over-\nloaded and top- \nheavy, then cap-\t\n  sized") == (
        "the ferry was overloaded and topheavy, then capsized"
    )
    assert text_clean("Page 4 -\nnext") == "Page 4 -\nnext"  # a dash after a number or a space is no hyphen
    # an OCR text layer writes "dan- " at a line end
    result = document_text_extract(
        data=fixture_bytes("pdf/pp_Seige_of_Vicksburg_Sample_OCR.pdf"), content_type=DocumentType.PDF, pages=6
    )
    text = "\n".join(block.text for block in result.blocks)
    assert "conspicuous and dangerous" in " ".join(text.split())


def test_pdf_with_empty_user_password_is_read():
    result = document_text_extract(data=fixture_bytes("pdf/pm_dmca.pdf"), content_type=DocumentType.PDF, pages=18)
    assert "Copyright" in " ".join(block.text for block in result.blocks)


def test_non_latin_text_survives():
    result = document_text_extract(data=fixture_bytes("pdf/pp_multilang.pdf"), content_type=DocumentType.PDF, pages=1)
    text = result.blocks[0].text
    assert any("\u0400" <= ch <= "\u04ff" for ch in text)  # Cyrillic
    assert any("\u0600" <= ch <= "\u06ff" for ch in text)  # Arabic


@pytest.mark.parametrize(
    "name", ["pdf/sf_libreoffice-writer-password.pdf", "pdf/pm_aes-256.pdf"], ids=["user-password", "aes-256"]
)
def test_encrypted_pdf_is_refused_with_the_fix(name):
    with pytest.raises(ParseFailed) as caught:
        document_inspect(data=fixture_bytes(name), content_type=DocumentType.PDF)
    assert caught.value.code == "encrypted_document"
    assert caught.value.message == "encrypted PDF: remove the password and upload again."
    assert caught.value.status == 400


def test_damaged_scan_that_renders_blank_is_refused_before_any_charge():
    # pdfjs_scan-bad.pdf's image stream is mangled: the page renders blank, so there is nothing to OCR.
    with pytest.raises(ParseFailed) as caught:
        document_inspect(data=fixture_bytes("pdf/pdfjs_scan-bad.pdf"), content_type=DocumentType.PDF)
    assert caught.value.code == "no_extractable_text"
    assert "blank" in caught.value.message


@pytest.mark.parametrize("name", ["pdf/pdfjs_bug1250079.pdf", "pdf/oc_invalid.pdf"])
def test_truncated_or_malformed_pdf_is_a_clear_error(name):
    with pytest.raises(ParseFailed) as caught:
        document_inspect(data=fixture_bytes(name), content_type=DocumentType.PDF)
    assert caught.value.code == "corrupt_document"
    assert "damaged" in caught.value.message


def test_page_limit_is_enforced_at_inspection(settings):
    settings.DOCUMENTS_MAX_PAGES = 10
    with pytest.raises(ParseFailed) as caught:
        document_inspect(data=fixture_bytes("pdf/tracemonkey-pldi-09.pdf"), content_type=DocumentType.PDF)
    assert caught.value.code == "too_many_pages"


def test_hundred_thousand_page_pdf_is_refused_before_any_page_is_read():
    answer = parse_worker.run("inspect", "pdf", many_pages_pdf(100_000), max_pages=2000)
    assert answer["ok"] is False and answer["code"] == "too_many_pages"
    assert "100000 pages" in answer["message"] and answer["hint"]
    assert answer["pages_read"] == 0


def test_pdf_whose_page_count_lies_is_refused_before_any_page_is_read():
    data = many_pages_pdf(30).replace(b"/Count 30 ", b"/Count 1 ")
    answer = parse_worker.run("inspect", "pdf", data, max_pages=10)
    assert answer["code"] == "too_many_pages" and answer["pages_read"] == 0


def test_pdf_under_the_limit_reads_only_the_pages_it_needs():
    answer = parse_worker.run("inspect", "pdf", many_pages_pdf(40), max_pages=2000)
    assert answer["ok"] is True and answer["pages"] == 40
    assert 0 < answer["pages_read"] < 40  # stops once a quarter of the pages show text


def test_sandbox_gets_the_page_limit(settings):
    settings.DOCUMENTS_MAX_PAGES = 30
    with pytest.raises(ParseFailed) as caught:
        document_inspect(data=many_pages_pdf(31), content_type=DocumentType.PDF)
    assert caught.value.code == "too_many_pages"


def test_memory_limit_stops_the_child_not_us(settings):
    settings.DOCUMENTS_PARSE_MEMORY_MB = 20  # too little even to import pypdf
    with pytest.raises(ParseFailed) as caught:
        document_inspect(data=fixture_bytes("pdf/sf_pdflatex-4-pages.pdf"), content_type=DocumentType.PDF)
    assert caught.value.code in ("parse_limit", "corrupt_document")


def test_wall_clock_timeout_stops_the_child(settings):
    settings.DOCUMENTS_PARSE_TIMEOUT_SECONDS = 1
    settings.DOCUMENTS_PARSE_SECONDS_PER_PAGE = 0.0
    settings.DOCUMENTS_OCR_SECONDS_PER_PAGE = 0.0
    # GeoTopo (117 pages) takes several seconds to extract; 1 s of wall time is not enough.
    with pytest.raises(ParseFailed) as caught:
        document_text_extract(
            data=fixture_bytes("pdf/sf_GeoTopo-komprimiert.pdf"), content_type=DocumentType.PDF, pages=117
        )
    assert caught.value.code == "parse_timeout"


# --- DOCX -----------------------------------------------------------------------------------


def _text(result):
    return "\n".join(block.text for block in result.blocks)


def test_docx_headings_paragraphs_and_tables():
    result = document_text_extract(
        data=fixture_bytes("docx/poi_heading123.docx"), content_type=DocumentType.DOCX, pages=1
    )
    headings = [(b.level, b.text) for b in result.blocks if b.kind == "heading"]
    assert [level for level, _ in headings][:3] == [1, 2, 3]
    body = [b for b in result.blocks if b.kind == "paragraph"]
    assert body and body[0].heading == headings[0][1]
    tables = document_text_extract(
        data=fixture_bytes("docx/pd_blk-paras-and-tables.docx"), content_type=DocumentType.DOCX, pages=1
    )
    kinds = [b.kind for b in tables.blocks]
    assert "table" in kinds and "paragraph" in kinds
    assert kinds.index("table") > kinds.index("paragraph")  # body order is kept
    cases = document_text_extract(
        data=fixture_bytes("docx/poi_IllustrativeCases.docx"), content_type=DocumentType.DOCX, pages=4
    )
    assert any(" | " in b.text for b in cases.blocks if b.kind == "table")  # cells of a row, side by side


def test_docx_page_count_from_app_xml():
    result = document_inspect(data=fixture_bytes("docx/poi_IllustrativeCases.docx"), content_type=DocumentType.DOCX)
    assert result.pages == 4 and result.pages_estimated is False


def test_docx_without_app_xml_estimates_pages():
    words = " ".join(["word"] * 1200)
    data = docx_bytes(
        f'<?xml version="1.0"?><w:document xmlns:w="{W_NS}"><w:body>'
        f"<w:p><w:r><w:t>{words}</w:t></w:r></w:p></w:body></w:document>"
    )
    result = document_inspect(data=data, content_type=DocumentType.DOCX)
    assert result.pages == 3 and result.pages_estimated is True


def test_docx_declaring_one_page_is_priced_from_its_text():
    # 200,000 five-letter words (1,199,800 characters) declaring <Pages>1</Pages>: 400 pages by either measure.
    paragraphs = five_letter_paragraphs(200)
    result = document_inspect(data=docx_declaring_pages(paragraphs, pages=1), content_type=DocumentType.DOCX)
    assert result.pages == 400 and result.pages_estimated is True


def test_docx_declared_pages_above_the_estimate_are_kept():
    result = document_inspect(
        data=docx_declaring_pages(["A short page of text."], pages=7), content_type=DocumentType.DOCX
    )
    assert result.pages == 7 and result.pages_estimated is False


def test_docx_pages_estimate_counts_characters_of_long_words():
    # 300 "words" of 100 letters: 1 page by words, 11 by characters (30,299 / 3,000).
    paragraphs = [" ".join(["x" * 100] * 300)]
    result = document_inspect(data=docx_declaring_pages(paragraphs, pages=1), content_type=DocumentType.DOCX)
    assert result.pages == 11


def test_docx_over_the_page_limit_by_its_text_is_refused(settings):
    settings.DOCUMENTS_MAX_PAGES = 50
    paragraphs = five_letter_paragraphs(30)  # 60 pages of text declaring 1
    with pytest.raises(ParseFailed) as caught:
        document_inspect(data=docx_declaring_pages(paragraphs, pages=1), content_type=DocumentType.DOCX)
    assert caught.value.code == "too_many_pages"


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("docx/pd_test.docx", ""),
        ("docx/poi_Bug51170.docx", "ção"),
        ("docx/poi_bug65649.docx", "КОНТРАКТ"),
        ("docx/poi_ComplexNumberedLists.docx", ""),
        ("docx/mm_text-box.docx", "Datum plane"),  # text only inside a text box
        ("docx/mm_strict-format.docx", "Test"),  # Strict OOXML: python-docx cannot, the raw reader can
    ],
)
def test_docx_fixtures_give_text(name, needle):
    result = document_text_extract(data=fixture_bytes(name), content_type=DocumentType.DOCX, pages=10)
    assert result.blocks
    assert needle in _text(result)


def test_empty_docx_is_refused_before_charging():
    with pytest.raises(ParseFailed) as caught:
        document_inspect(data=fixture_bytes("docx/mm_empty.docx"), content_type=DocumentType.DOCX)
    assert caught.value.code == "no_extractable_text"


@pytest.mark.parametrize(
    "name",
    [
        "docx/poi_truncated62886.docx",
        "docx/poi_clusterfuzz-POIXWPFFuzzer-6442791109263360.docx",
        "docx/poi_bug53475-password-is-pass.docx",
    ],
)
def test_broken_docx_reaching_the_parser_still_fails_cleanly(name):
    with pytest.raises(ParseFailed) as caught:
        document_inspect(data=fixture_bytes(name), content_type=DocumentType.DOCX)
    assert caught.value.code == "corrupt_document"
