"""bench/extraction_junk.py's junk rule (pure): what the extraction report counts as a junk entity."""

from __future__ import annotations

from bench.extraction_junk import _stopwords, junk_reason


def test_junk_rule_classes() -> None:
    stop = _stopwords()
    text = "TraceMonkey calls T16; T16 loops. B897 once. NASA and NASA."
    assert junk_reason("T16", text, 3, stop) == "" and junk_reason("B897", text, 3, stop) == "code"
    assert junk_reason("TOED", text, 3, stop) == "caps" and junk_reason("TOED", text, 1, stop) == ""
    assert junk_reason("NASA", text, 3, stop) == ""
    assert junk_reason("film stars Audrey", "", 1, stop) == "fragment"
    assert junk_reason("Hepburn as Eliza", "", 1, stop) == "fragment"
    assert junk_reason("beating Becky Brewerton", "", 1, stop) == "fragment"
    assert junk_reason("trees back", "", 1, stop) == "fragment"
    assert junk_reason("musician and author", "", 1, stop) == "lowercase"
    assert junk_reason("Bank of England", "", 1, stop) == "" and junk_reason("trace trees", "", 1, stop) == ""


def test_name_connectors_inside_a_capitalised_name_are_not_fragments() -> None:
    stop = _stopwords()
    assert junk_reason("Symposium on Maritime Law", "", 1, stop) == ""
    assert junk_reason("Frankfurt an der Oder", "", 1, stop) == ""
    assert junk_reason("Council for Coastal Trade", "", 1, stop) == ""
    assert junk_reason("Lighthouse on", "", 1, stop) == "fragment"  # a connector last is still a fragment
