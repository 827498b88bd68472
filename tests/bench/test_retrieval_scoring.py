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


def test_a_variant_sets_each_modules_copy_of_a_tunable_and_restores_it():
    import pytest

    from bench.retrieval import tunables, variant_parse
    from exograph.graphs.retrieval import graph_mode, types

    variant = variant_parse("PPR_DAMPING=0.5,PPR_PASSAGE_SEEDS=20")
    assert variant == {"PPR_DAMPING": 0.5, "PPR_PASSAGE_SEEDS": 20.0}
    before = (types.PPR_DAMPING, graph_mode.PPR_PASSAGE_SEEDS)
    with tunables(variant):
        assert types.PPR_DAMPING == 0.5 and graph_mode.PPR_DAMPING == 0.5
        assert graph_mode.PPR_PASSAGE_SEEDS == 20 and isinstance(graph_mode.PPR_PASSAGE_SEEDS, int)
    assert (types.PPR_DAMPING, graph_mode.PPR_PASSAGE_SEEDS) == before
    with pytest.raises(SystemExit):
        variant_parse("damping=0.5")
    with pytest.raises(SystemExit), tunables({"NO_SUCH_TUNABLE": 1.0}):
        pass


def test_the_summary_judges_validation_against_dev_and_graph_p95_against_vector():
    from bench.retrieval import summary

    def entry(split, r5, graph_p95, vector_p95):
        return {
            "split": split,
            "questions": 20,
            "load_average": [4.0, 5.0],
            "modes": {"vector": {"p95_ms": vector_p95}, "graph": {"r5": r5, "p95_ms": graph_p95}},
        }

    rows = summary(
        {
            "datasets": {
                "musique": entry("dev", 78.0, 60.0, 30.0),
                "musique-validation": entry("validation", 75.5, 100.0, 30.0),
            }
        }
    )
    dev = next(r for r in rows if r.startswith("| musique |"))
    validation = next(r for r in rows if r.startswith("| musique-validation |"))
    assert "≥ 77.0 | yes" in dev and "| 2.00 | yes |" in dev
    assert "≥ dev − 2 = 76.0 | no" in validation and "| 3.33 | no |" in validation
