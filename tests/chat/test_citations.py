"""The citation check: invalid numbers dropped, uncited and unsupported sentences listed, support score."""

from __future__ import annotations

from exograph.chat.citations import CitationRenumbering, citations_check

EVIDENCE = {
    1: "Acme Corp was founded in 1999 by Ada Lovelace.",
    2: "Globex acquired Initech for 2.80 billion dollars.",
}


def test_numbers_pointing_at_nothing_are_removed_and_reported() -> None:
    check = citations_check(
        answer="Acme Corp was founded in 1999 [1, 7]. Globex bought Initech [9].", evidence=EVIDENCE
    )
    assert check.invalid == [7, 9]
    assert "[7]" not in check.answer and "[9]" not in check.answer and "[1]" in check.answer
    assert check.cited == [1]


def test_ranges_and_lists_cite_every_number() -> None:
    check = citations_check(answer="Globex acquired Initech for 2.8 billion [1-2].", evidence=EVIDENCE)
    assert check.cited == [1, 2] and check.unsupported == [] and check.support_score == 1.0


def test_cited_sentence_whose_figure_or_name_the_evidence_lacks_is_unsupported() -> None:
    check = citations_check(answer="Acme Corp was founded in 2001 by Grace Hopper [1].", evidence=EVIDENCE)
    assert check.unsupported == [
        {
            "sentence": "Acme Corp was founded in 2001 by Grace Hopper [1].",
            "figures": ["2001"],
            "names": ["Grace Hopper"],
        }
    ]
    assert check.grounded is True and check.support_score == 0.0


def test_factual_sentence_without_citation_is_listed_but_a_lack_of_evidence_is_not() -> None:
    answer = "Ada Lovelace founded Acme Corp [1]. Globex has 500 staff. The graphs do not say who founded Globex."
    check = citations_check(answer=answer, evidence=EVIDENCE)
    assert check.uncited == ["Globex has 500 staff."]
    assert check.support_score == 0.5


def test_answer_citing_nothing_real_is_not_grounded() -> None:
    check = citations_check(answer="Acme is old [5].", evidence=EVIDENCE)
    assert check.grounded is False and check.invalid == [5]


def test_trailing_zeros_do_not_matter_and_spelled_numbers_are_not_figures_found() -> None:
    assert citations_check(answer="Initech cost 2.8 billion [2].", evidence=EVIDENCE).unsupported == []
    check = citations_check(answer="Acme Corp had two founders in 1999 and 2 offices [1].", evidence=EVIDENCE)
    assert check.unsupported and check.unsupported[0]["figures"] == ["2"]


def test_a_streamed_answer_carries_the_numbers_of_the_whole_answer_even_when_a_marker_is_cut() -> None:
    answer = "Acme Corp [7][5]: Acme acquired Pico [5, 7], which makes the BL-9 [7]. Earlier [2]. Odd [x] and [9"
    pieces = [
        "Acme Corp [",
        "7][",
        "5]: Acme acquired Pico [5,",
        " 7], which makes the BL-9 [7",
        "]. Earlier [2]",
        ". Odd [x] and [9",
    ]
    streaming = CitationRenumbering(own=[5, 6, 7], start=5)
    streamed = "".join(streaming.feed(piece) for piece in pieces) + streaming.finish()
    whole = CitationRenumbering(own=[5, 6, 7], start=5)
    assert streamed == whole.whole(answer)
    # 7 is cited first, so it becomes 5; an earlier turn's [2] and text that is no marker stay as they were.
    assert (
        streamed == "Acme Corp [5][6]: Acme acquired Pico [6, 5], which makes the BL-9 [5]. Earlier [2]. Odd [x] and [9"
    )
    assert streaming.mapping == whole.mapping == {7: 5, 5: 6}


def test_an_item_an_earlier_turn_cited_keeps_its_number_and_takes_none_of_the_new_ones() -> None:
    # 6 is the passage the session already shows as [2]: it streams as [2], and the new items go on from 5.
    streaming = CitationRenumbering(own=[5, 6, 7], start=5, fixed={6: 2})
    streamed = streaming.feed("Oslo [7") + streaming.feed("]. The ferry [6, 5].") + streaming.finish()
    assert streamed == "Oslo [5]. The ferry [2, 6]."
    assert streaming.next_number == 7  # two new numbers taken: 5 and 6
