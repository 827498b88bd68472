"""The chat benchmark's answer scoring on hand-made examples (SQuAD EM/F1 and citation stripping)."""

from __future__ import annotations

from bench.chat import answer_text, exact_match, f1_score, normalize_answer, support_auc


def test_normalisation_drops_case_punctuation_and_articles():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"
    assert normalize_answer("an Apple, a day") == "apple day"


def test_exact_match_takes_any_alias():
    assert exact_match("the USA", ["United States", "USA"]) == 1.0
    assert exact_match("USA today", ["USA"]) == 0.0
    assert exact_match("", [""]) == 0.0


def test_f1_is_token_overlap_against_the_best_alias():
    assert f1_score("Paris France", ["Paris"]) == 2 * (0.5 * 1.0) / 1.5
    assert f1_score("Lyon", ["Paris", "Lyon"]) == 1.0
    assert f1_score("nothing", ["Paris"]) == 0.0


def test_citation_marks_are_not_part_of_the_scored_answer():
    assert answer_text("Paris [1] is the capital [2, 3].") == "Paris is the capital ."


def test_support_auc_is_the_share_of_right_wrong_pairs_the_support_score_orders_right():
    assert support_auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert support_auc([0.5], [0.5]) == 0.5
    assert support_auc([0.2, 0.9], [0.5]) == 0.5
    assert support_auc([], [0.5]) is None
