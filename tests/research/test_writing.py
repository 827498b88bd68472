"""Research reports use chat's writer: cited whole sentences grouped by sub-question, the unanswered ones named,
relations never rendered as prose; only sources about the topic are read, one document is one source, and a
session whose sources do not cover its topic says so and is not charged for the synthesis."""

from __future__ import annotations

import pytest

from billing.models import Hold, HoldStatus
from billing.services import credit_balance
from research.models import ResearchSource, ResearchStatus, ResearchStep
from research.services import research_session_create
from research.services.export import research_export_markdown
from research.services.writing import Fact, SourceDigest, research_synthesise, source_relevant, summary_line
from tests.research.conftest import QUANTUM

RELATIONS_PAPER = (
    "Open relation discovery from news text",
    "We discover relations between entities in newswire text without a fixed schema. In 2005 the nomination of "
    "Samuel Alito was reported alongside hurricane Katrina in New Orleans. Our clustering groups entity pairs by "
    "the contexts in which they co-occur. The method reaches 0.71 F1 on the held-out relation set.",
    "https://papers.example.org/relation-discovery",
)


def _digests() -> list[SourceDigest]:
    return [SourceDigest(number=i, kind="local", title=t, text=x) for i, (t, x, _u) in enumerate(QUANTUM, start=1)]


def test_findings_are_cited_sentences_grouped_by_sub_question_and_the_unanswered_one_is_named(settings) -> None:
    settings.RESEARCH_PROVIDER = "extractive"
    asked = ["Who came up with the toric code?", "What does a superconducting qubit cost to buy?"]
    synthesis = research_synthesise(
        topic="how quantum error correction began",
        model="snap",
        sources=_digests(),
        facts=[Fact(text="1997 related to Alexei Kitaev.", numbers=(1,))],
        sub_questions=asked,
    )
    assert synthesis.findings, synthesis
    assert {f["sub_question"] for f in synthesis.findings} == {asked[0]}
    # The sub-question's best sentence comes first, whole and cited.
    assert synthesis.findings[0]["text"] == "Alexei Kitaev proposed the toric code in 1997."
    assert synthesis.findings[0]["citations"] == [1]
    for finding in synthesis.findings:
        assert finding["citations"] and set(finding["citations"]) <= {1, 2, 3}
        assert "related to" not in finding["text"]  # a relation is evidence, never a sentence of the report
        assert finding["text"][-1] in ".!?"  # whole sentences only
    assert synthesis.unanswered == [asked[1]]
    assert f"The sources do not answer: {asked[1]}" in synthesis.open_questions


def test_a_sub_question_answered_by_a_sentence_already_listed_is_not_called_unanswered(settings) -> None:
    settings.RESEARCH_PROVIDER = "extractive"
    note = SourceDigest(
        number=1,
        kind="local",
        title="ferry note",
        text="The Ardmore ferry pier was lengthened in 2021 to take the larger vessel.\n"
        "The council paid for the work from its harbour reserve.",
    )
    asked = ["when the Ardmore ferry pier was lengthened", "Ardmore ferry pier"]
    synthesis = research_synthesise(topic=asked[0], model="snap", sources=[note], facts=[], sub_questions=asked)
    assert any("lengthened in 2021" in f["text"] for f in synthesis.findings), synthesis
    # The second sub-question's sentence is the one listed under the first: the sources do answer it.
    assert asked[1] not in synthesis.unanswered, synthesis
    assert not any(asked[1] in q for q in synthesis.open_questions)


def test_a_notes_heading_line_is_never_a_finding(settings) -> None:
    settings.RESEARCH_PROVIDER = "extractive"
    note = SourceDigest(
        number=1,
        kind="local",
        title="dam.txt",
        text="Glenmore Dam Survey - field notes\n\n"
        "The Glenmore dam spillway was widened in 2017 after the floods of 2015.\n"
        "The survey was carried out by hydrologist Ines Varga.",
    )
    topic = "who surveyed the Glenmore dam and when its spillway was widened"
    synthesis = research_synthesise(topic=topic, model="snap", sources=[note], facts=[], sub_questions=[topic])
    assert synthesis.findings, synthesis
    assert all(f["text"][-1] in ".!?" for f in synthesis.findings), synthesis.findings  # whole sentences only


def test_a_finding_that_opens_with_a_pronoun_names_what_it_stands_for(settings) -> None:
    # A finding is read out of its passage: "It was designed by ..." says nothing in a list of findings.
    settings.RESEARCH_PROVIDER = "extractive"
    note = SourceDigest(
        number=1,
        kind="local",
        title="beacons.md",
        text="Beacons of Loch Linnhe\n\nCorran Point Light stands on a headland north of Ardgour. "
        "It was designed by Thomas Murdoch and first lit in 1860.",
    )
    topic = "who designed the Corran Point Light"
    synthesis = research_synthesise(topic=topic, model="snap", sources=[note], facts=[], sub_questions=[topic])
    texts = [f["text"] for f in synthesis.findings]
    assert "Corran Point Light was designed by Thomas Murdoch and first lit in 1860." in texts, texts
    assert not any(t.startswith("It ") for t in texts), texts
    assert all(f["citations"] == [1] for f in synthesis.findings)


def test_the_read_test_takes_a_source_about_the_topic_in_other_words_and_leaves_one_that_is_not() -> None:
    title, text, _url = QUANTUM[0]
    topic = "How do surface codes shield qubits against noise?"
    assert source_relevant(topic=topic, title=title, snippet=text, similarity=None)
    assert not source_relevant(topic=topic, title=RELATIONS_PAPER[0], snippet=RELATIONS_PAPER[1], similarity=None)


@pytest.mark.django_db(transaction=True)
def test_a_session_whose_sources_are_off_topic_reads_none_says_so_and_is_not_charged_for_synthesis(
    alice, bob, fund, world_source
):
    world_source(bob, title=RELATIONS_PAPER[0], text=RELATIONS_PAPER[1], url=RELATIONS_PAPER[2])
    fund(alice, 100)
    session = research_session_create(actor=alice, query="how does trace-based compilation speed up JavaScript")
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, session.error
    assert not ResearchSource.objects.filter(session=session).exists()
    report = session.report
    assert report["findings"] == [] and report["sources"] == []
    assert "No source read covers how does trace-based compilation speed up JavaScript" in report["summary"]
    assert "not charged" in report["summary"] and "not about the topic" in session.note
    steps = dict(ResearchStep.objects.filter(session=session).values_list("key", "credits"))
    assert steps["synthesise"] == 0 and not any(key.startswith("read:") for key in steps)
    assert (
        session.credits_spent
        == sum(steps.values())
        == steps["plan"] + sum(v for k, v in steps.items() if k.startswith("search:"))
    )
    assert credit_balance(account=alice) == 100 - session.credits_spent
    assert Hold.objects.get(pk=session.hold_id).status == HoldStatus.CLOSED


@pytest.mark.django_db(transaction=True)
def test_the_same_paper_from_two_contributors_is_one_source(alice, bob, charlie, fund, world_source):
    title, text, url = QUANTUM[0]
    world_source(bob, title=title, text=text, url=url)
    world_source(charlie, title=title, text=text + " Reposted.", url=url + "/")
    fund(alice, 100)
    session = research_session_create(actor=alice, query="quantum error correction with surface codes")
    session.refresh_from_db()
    assert session.status == ResearchStatus.COMPLETED, session.error
    assert [s["title"] for s in session.report["sources"]] == [title]
    assert ResearchStep.objects.get(session=session, key="select").result["skipped_duplicate"] >= 1
    findings = session.report["findings"]
    assert findings and all(f["citations"] == [1] for f in findings)
    markdown = research_export_markdown(session=session)
    assert f"### {findings[0]['sub_question']}" in markdown  # the export groups findings by sub-question


def test_the_summary_ends_a_question_topic_once() -> None:
    line = summary_line(topic="How do surface codes shield qubits?", papers=1, articles=0, local=2)
    assert line == (
        "Found 1 academic paper and 2 sources from the platform's World Graph on How do surface codes shield qubits?"
    )
    assert summary_line(topic="surface codes", papers=0, articles=2, local=0).endswith("on surface codes.")


def test_the_summary_names_only_the_kinds_of_source_read() -> None:
    # a newcomer's private session read one of their own notes: no "0 academic papers and 0 technical articles"
    assert summary_line(topic="allotments", papers=0, articles=0, local=1, own=1) == (
        "Found 1 source from your own documents on allotments."
    )
    assert summary_line(topic="kilns", papers=2, articles=1, local=3, own=1) == (
        "Found 2 academic papers, 1 technical article, 1 source from your own documents and 2 sources from the "
        "platform's World Graph on kilns."
    )
    assert summary_line(topic="kilns", papers=0, articles=0, local=0) == "Found no sources on kilns."


def test_a_configured_model_gets_the_sub_questions_and_its_unanswered_list_is_kept(openai_research) -> None:
    asked = ["Who came up with the toric code?", "What does a superconducting qubit cost to buy?"]
    openai_research.queue(
        '{"findings": [{"text": "Alexei Kitaev proposed the toric code.", "citations": [1]}], '
        '"open_questions": [], "unanswered": ["What does a superconducting qubit cost to buy?"]}'
    )
    synthesis = research_synthesise(
        topic="how quantum error correction began", model="snap", sources=_digests(), facts=[], sub_questions=asked
    )
    prompt = openai_research.bodies[0]["messages"][-1]["content"]
    assert f"Sub-questions:\n- {asked[0]}\n- {asked[1]}" in prompt and '"unanswered"' in prompt
    assert synthesis.findings == [{"text": "Alexei Kitaev proposed the toric code.", "citations": [1]}]
    assert synthesis.unanswered == [asked[1]] and synthesis.covered
