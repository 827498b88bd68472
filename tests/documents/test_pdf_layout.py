"""A PDF page's furniture (running heads, footers, page numbers) left out of its chunks and its headings made
paragraphs, while short lines of content (authors, affiliations, addresses) stay as they are. Invented text."""

from __future__ import annotations

from exograph.core.llm.extractive_text import whole_sentences
from exograph.documents.chunking import chunk_blocks
from exograph.documents.models import DocumentType
from exograph.documents.parsing import Block, document_text_extract
from exograph.documents.pdf_layout import heading_line, page_number_line, pdf_pages_tidy
from tests.documents.conftest import fixture_bytes

HEAD = "Lowland Drainage Review, vol. 12 ({n})"
PAGES = [
    "\n".join(
        [
            HEAD.format(n=1),
            "Peat Subsidence in the Fenmoor Basin",
            "Ilse Varnholt Tomasz Quellberg",
            "Harwick Institute of Hydrology",
            "14 Dyke Lane, Marlow Fen",
            "SUMMARY",
            "The Fenmoor Basin has sunk by two metres since the pumping station",
            "at Oxley Sluice was opened in 1851.",
            "– 1 –",
        ]
    ),
    "\n".join(
        [
            HEAD.format(n=2),
            "2.1 Pumping Records",
            "Daily logs kept by the station keeper Ada Pellow survive from 1862",
            "and give the water level at the sluice for each tide.",
            "– 2 –",
        ]
    ),
    "\n".join(
        [
            HEAD.format(n=3),
            "Core samples taken in 1998 show that the upper peat has shrunk",
            "by a third wherever the fields were drained for wheat.",
            "Page 3",
        ]
    ),
    f"{HEAD.format(n=4)}\n4",  # a page of furniture only
]


def _tidy() -> list[Block]:
    return pdf_pages_tidy([Block(text=text, page=number, kind="page") for number, text in enumerate(PAGES, 1)])


def test_a_running_head_and_page_numbers_are_left_out_and_pages_keep_their_numbers():
    tidy = _tidy()
    assert [block.page for block in tidy] == [1, 2, 3]  # the page of furniture only is gone
    text = "\n".join(block.text for block in tidy)
    assert "Lowland Drainage Review" not in text
    assert "– 1 –" not in text and "– 2 –" not in text and "Page 3" not in text
    assert tidy[2].text.startswith("Core samples taken in 1998")
    assert tidy[2].text.endswith("drained for wheat.")


def test_a_heading_is_a_paragraph_of_its_own_and_the_author_block_stays_as_it_was():
    first, second = _tidy()[:2]
    assert first.text == (
        "Peat Subsidence in the Fenmoor Basin\n"
        "Ilse Varnholt Tomasz Quellberg\n"
        "Harwick Institute of Hydrology\n"
        "14 Dyke Lane, Marlow Fen\n\n"
        "SUMMARY\n\n"
        "The Fenmoor Basin has sunk by two metres since the pumping station\n"
        "at Oxley Sluice was opened in 1851."
    )
    assert second.text.startswith("2.1 Pumping Records\n\nDaily logs kept")
    (chunk,) = chunk_blocks(document_id="d", blocks=[first], max_tokens=200, overlap_tokens=20)
    assert whole_sentences(chunk.text)[0].startswith("The Fenmoor Basin has sunk")


def test_only_clear_headings_and_page_numbers_are_recognised():
    assert heading_line("ACKNOWLEDGEMENTS") and heading_line("3.2 Field Methods") and heading_line("4. Results")
    assert not heading_line("Harwick Institute of Hydrology")  # an affiliation
    assert not heading_line("Ilse Varnholt")  # a name
    assert not heading_line("2. Keep the sluice gates open during the")  # a list item's sentence, cut by the line
    assert not heading_line("(EGU-07).")  # a reference's tail
    assert page_number_line("12") and page_number_line("- 12 -") and page_number_line("Page 5 of 9")
    assert not page_number_line("1851 floods") and not page_number_line("Chapter 5")


def test_a_repeated_body_text_is_not_taken_for_a_running_head():
    line = "The sluice keeper wrote the level down at every tide of the year."
    pages = [Block(text="\n".join([line] * 20), page=n, kind="page") for n in (1, 2, 3)]
    assert [block.text for block in pdf_pages_tidy(pages)] == [block.text for block in pages]


def test_a_short_document_and_other_blocks_are_left_alone():
    two = [Block(text=f"{HEAD.format(n=n)}\nA sentence on page {n} of the note.", page=n, kind="page") for n in (1, 2)]
    assert [b.text.splitlines()[0] for b in pdf_pages_tidy(two)] == [HEAD.format(n=1), HEAD.format(n=2)]
    docx = [Block(text="INTRODUCTION\nSome text.", page=None, heading="Intro")]
    assert pdf_pages_tidy(docx) == docx


def test_the_dmca_summarys_running_head_no_longer_opens_its_first_sentence():
    # pm_dmca.pdf: each page opens with "The Digital Millennium Copyright Act of 1998" and "Copyright Office Summary
    # December 1998 Page N"; page 1 then has a title block and "INTRODUCTION" above the first paragraph.
    blocks = document_text_extract(
        data=fixture_bytes("pdf/pm_dmca.pdf"), content_type=DocumentType.PDF, pages=18
    ).blocks
    chunks = chunk_blocks(document_id="doc", blocks=blocks, max_tokens=200, overlap_tokens=40)
    assert {chunk.page for chunk in chunks} == set(range(1, 19))
    assert not any("Copyright Office Summary December 1998 Page" in chunk.text for chunk in chunks)
    sentences = whole_sentences(chunks[0].text)
    signed = next(s for s in sentences if "was signed into law" in s)
    assert signed.startswith("The Digital Millennium Copyright Act (DMCA) was signed into law"), signed
    # a paragraph's full lines stay one paragraph: the treaty sentence is whole
    assert any(s.startswith("The legislation implements two 1996 World") and s.endswith("Treaty.") for s in sentences)
    page_two = next(chunk for chunk in chunks if chunk.page == 2)
    assert page_two.text.startswith("TITLE I: WIPO TREATY IMPLEMENTATION\n\nTitle I implements"), page_two.text[:80]
