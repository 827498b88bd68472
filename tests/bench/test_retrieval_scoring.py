"""The retrieval benchmark's scoring on hand-made examples (the recall math, not the benchmark)."""

from __future__ import annotations

import json

from bench.retrieval import all_recall_at_k, dataset_load, recall_at_k, rrf_fuse, summarize


def test_recall_at_k_counts_gold_in_the_top_k_once():
    gold = {"a", "b"}
    assert recall_at_k(gold, ["a", "x", "b"], 2) == 0.5
    assert recall_at_k(gold, ["a", "a", "b"], 2) == 1.0  # a repeat is one passage
    assert recall_at_k(gold, ["x", "y"], 5) == 0.0
    assert recall_at_k(set(), ["a"], 5) == 0.0


def test_all_recall_needs_every_gold_passage():
    assert all_recall_at_k({"a", "b"}, ["a", "x", "y", "z", "b"], 5) == 1.0
    assert all_recall_at_k({"a", "b"}, ["a", "x", "y", "z", "w", "b"], 5) == 0.0


def test_summary_averages_in_percent():
    rows = [({"a", "b"}, ["a", "b"]), ({"c", "d"}, ["c", "x", "y", "z", "q", "d"])]
    summary = summarize(rows, [10.0, 30.0])
    assert summary["r2"] == 75.0 and summary["r5"] == 75.0 and summary["ar5"] == 50.0
    assert summary["questions"] == 2 and summary["p95_ms"] == 30.0


def test_rrf_ranks_items_found_by_both_lists_first():
    assert rrf_fuse([["a", "b", "c"], ["c", "a"]])[:2] == ["a", "c"]


def test_musique_format_pools_paragraphs_and_marks_gold(tmp_path):
    folder = tmp_path / "musique"
    folder.mkdir()
    para = {"title": "T", "paragraph_text": "Shared text.", "is_supporting": True}
    questions = [
        {"question": "q1", "paragraphs": [para, {"title": "U", "paragraph_text": "Other.", "is_supporting": False}]},
        {"question": "q2", "paragraphs": [para]},
    ]
    (folder / "musique_dev_2.json").write_text(json.dumps(questions))
    dataset = dataset_load(folder, limit=None)
    assert dataset is not None and len(dataset.passages) == 2
    assert dataset.questions[0][1] == dataset.questions[1][1] and len(dataset.questions[0][1]) == 1
