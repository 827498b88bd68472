"""A document's title written straight above its first subheading is not a passage of its own."""

from __future__ import annotations

from exograph.documents.chunking import chunk_blocks
from exograph.documents.parsing import Block, text_blocks

NOTE = """# Tamsin Row Allotment Society: Plot Rules

## Plots
Each member rents one plot of 250 square metres. Rent is due on 1 April.

## Water
Hoses may be used only before 9 a.m. and after 6 p.m.
"""


def _chunks(blocks: list[Block]) -> list[str]:
    return [c.text for c in chunk_blocks(document_id="d1", blocks=blocks, max_tokens=200, overlap_tokens=20)]


def test_a_markdown_title_opens_the_first_section_instead_of_standing_alone():
    texts = _chunks(text_blocks(text=NOTE, markdown=True))
    assert "Tamsin Row Allotment Society: Plot Rules" not in texts
    assert texts[0].startswith("Tamsin Row Allotment Society: Plot Rules\n\nPlots\n\nEach member rents one plot")
    assert any(text.startswith("Water\n\nHoses may be used") for text in texts)


def test_a_docx_title_then_subheading_is_one_passage_and_a_trailing_heading_is_kept():
    blocks = [
        Block(text="Orchard Survey", page=None, heading="Orchard Survey", level=1, kind="heading"),
        Block(text="Pears", page=None, heading="Orchard Survey › Pears", level=2, kind="heading"),
        Block(text="Twelve pear trees were counted.", page=None, heading="Orchard Survey › Pears"),
        Block(text="Appendix", page=None, heading="Appendix", level=1, kind="heading"),
    ]
    texts = _chunks(blocks)
    assert texts == ["Orchard Survey\n\nPears\n\nTwelve pear trees were counted.", "Appendix"]
