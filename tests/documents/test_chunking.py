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


def test_windows_are_measured_by_the_models_own_tokenizer():
    """Identifiers, numbers and URLs run far above 1.3 word pieces a word: by the estimate alone such a window
    passes the model's 256-token input and its tail is never embedded; counted by the tokenizer, none does."""
    from exograph.graphs.embeddings import get_embedder, token_counter

    count = token_counter()
    assert count is not None and count == get_embedder().count_tokens  # type: ignore[attr-defined]
    words = [f"0x{i:06x}f3 {i * 7919}.{i % 97} https://ex.org/r/{i}?q=z{i}" for i in range(120)]
    blocks = [Block(text=" ".join(words), page=1, kind="page")]
    estimated = chunk_blocks(document_id="doc", blocks=blocks, max_tokens=200, overlap_tokens=40)
    assert max(count(c.text) for c in estimated) > 256  # the defect: past the model's input, silently cut
    counted = chunk_blocks(document_id="doc", blocks=blocks, max_tokens=200, overlap_tokens=40, count_tokens=count)
    assert all(count(c.text) <= 200 for c in counted)
    assert set(" ".join(c.text for c in counted).split()) == set(" ".join(words).split())  # nothing lost
    first, second = counted[0].text.split(), counted[1].text.split()
    at = first.index(second[0])
    assert 0 < at and first[at:] == second[: len(first) - at]  # still overlapping: the second opens on the first's tail


def test_prose_windows_are_unchanged_by_counting():
    """Ordinary prose fits its estimated window, so counting keeps those chunks (and their ids) as they were."""
    from exograph.graphs.embeddings import token_counter

    sentence = "The committee met in the spring to review the plans for the new library and its gardens."
    blocks = [Block(text=" ".join([sentence] * 40), page=2, kind="page")]
    plain = chunk_blocks(document_id="doc", blocks=blocks, max_tokens=200, overlap_tokens=40)
    counted = chunk_blocks(
        document_id="doc", blocks=blocks, max_tokens=200, overlap_tokens=40, count_tokens=token_counter()
    )
    assert [c.id for c in counted] == [c.id for c in plain] and len(plain) > 2


def test_paragraphs_stay_apart_so_a_title_never_opens_the_next_sentence():
    # A plain-text upload: a title line, then two paragraphs (one block each), and a blank line inside a block.
    blocks = [
        Block(text="Field notes, winter issue", page=None),
        Block(text="The old mill on the river was rebuilt in 1902. It was designed by Mara Quint.", page=None),
        Block(text="The bakery opened in 1950.\n\nA second shop followed in 1961.", page=None),
    ]
    (chunk,) = chunk_blocks(document_id="doc", blocks=blocks, max_tokens=200, overlap_tokens=20)
    assert chunk.text.split("\n\n") == [
        "Field notes, winter issue",
        "The old mill on the river was rebuilt in 1902. It was designed by Mara Quint.",
        "The bakery opened in 1950.",
        "A second shop followed in 1961.",
    ]
    # the reader's sentences: the title is left out, not glued to "The old mill ..."
    from exograph.core.llm.extractive_text import whole_sentences

    assert whole_sentences(chunk.text)[0] == "The old mill on the river was rebuilt in 1902."


def test_a_paragraph_break_inside_a_window_of_a_long_section_is_kept_in_every_window_holding_it():
    words = " ".join(f"w{i}" for i in range(150))
    blocks = [Block(text=words, page=None), Block(text="Closing remark here.", page=None)]
    chunks = chunk_blocks(document_id="doc", blocks=blocks, max_tokens=130, overlap_tokens=26)
    assert chunks[-1].text.endswith("w149\n\nClosing remark here.")
    assert all(" \n" not in c.text and "\n " not in c.text for c in chunks)


def test_a_later_window_opens_on_a_sentence_so_no_fragment_is_read_as_one():
    # A newcomer's note on make run: the second window of its one section began inside "... tested with a PAT tester
    # before it goes home.", and with the section's heading in front it read "Repair Café handbook: it goes home.":
    # chat and research quoted that as a sentence. Later windows now open where a sentence (or paragraph) does.
    from exograph.core.llm.extractive_text import whole_sentences
    from exograph.documents.parsing import text_blocks

    sentences = [
        f"Volunteer number {i} {'mended a lamp' if i % 2 else 'sewed a torn coat'} at the stall"
        f"{' while the owner watched and asked about fuses' * (i % 3)} on day {i}."
        for i in range(40)
    ]
    note = f"# Repair Café handbook\n\n{' '.join(sentences[:20])}\n\n{' '.join(sentences[20:])}\n"
    chunks = chunk_blocks(
        document_id="doc", blocks=text_blocks(text=note, markdown=True), max_tokens=130, overlap_tokens=26
    )
    window = int(130 / TOKENS_PER_WORD)
    assert len(chunks) > 4
    for chunk in chunks[1:]:
        body = chunk.text.removeprefix("Repair Café handbook\n\n")
        assert body.startswith("Volunteer number"), body[:60]  # a sentence's first words, never its tail
        assert len(body.split()) <= window
        assert set(whole_sentences(chunk.text)) <= set(sentences)
    assert set(" ".join(c.text for c in chunks).split()) >= set(" ".join(sentences).split())  # nothing lost


def test_a_plain_text_title_written_above_its_paragraph_is_never_glued_to_its_first_sentence():
    # Notes typed with a section title on the line straight above the text ("Opening hours" then "The shop opens
    # ..."): the title was joined to the first sentence as one line ("Opening hours The shop opens at nine"), so the
    # reader quoted "Opening hours The shop ..." and took "Opening" for a name. A hard-wrapped paragraph, whose middle
    # lines are full width, stays one paragraph whatever its lines start with.
    from exograph.core.llm.extractive_text import whole_sentences
    from exograph.documents.parsing import text_blocks

    note = (
        "Corner bakery\n\n"
        "Opening hours\n"
        "The shop opens at nine on weekdays and at eight on Saturdays.\n"
        "Staff and suppliers\n"
        "Flour comes from the Tallow Mill near Ridley. Bread is baked by two bakers before dawn.\n\n"
        "The oven was bought second-hand in 2019 from a hotel kitchen in the town of\n"
        "Marsden Vale and was relined by a local mason when the bakery moved into the\n"
        "Old Forge, which the owners rent from the parish.\n"
    )
    blocks = [block.text for block in text_blocks(text=note, markdown=False)]
    assert blocks[:5] == [
        "Corner bakery",
        "Opening hours",
        "The shop opens at nine on weekdays and at eight on Saturdays.",
        "Staff and suppliers",
        "Flour comes from the Tallow Mill near Ridley. Bread is baked by two bakers before dawn.",
    ]
    assert blocks[5].startswith("The oven was bought") and blocks[5].endswith("rent from the parish.")
    assert len(blocks) == 6
    chunks = chunk_blocks(
        document_id="doc", blocks=text_blocks(text=note, markdown=False), max_tokens=200, overlap_tokens=20
    )
    sentences = [s for c in chunks for s in whole_sentences(c.text)]
    assert "The shop opens at nine on weekdays and at eight on Saturdays." in sentences
    assert not any(s.startswith(("Opening hours", "Staff and suppliers")) for s in sentences)
