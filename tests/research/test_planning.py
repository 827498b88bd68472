"""The offline research plan asks readable questions built from the topic's own phrases, never word windows."""

from __future__ import annotations

import pytest

from research.services.writing import research_plan

TOPICS = [
    "grazing rights of upland sheep farmers in Cumbria",
    "How did the Brackenfield Choir raise money for its new organ?",
    "Marie Curie and the discovery of polonium",
    "water quality of the River Teme after 2015",
    "Which charities run food banks, soup kitchens and night shelters in Leeds?",
]


@pytest.fixture(autouse=True)
def _offline(settings):  # type: ignore[no-untyped-def]
    settings.RESEARCH_PROVIDER = "extractive"


@pytest.mark.parametrize("model", ["snap", "ponder"])
@pytest.mark.parametrize("topic", TOPICS)
def test_every_offline_sub_question_is_a_whole_question_about_the_topic(settings, topic, model):  # type: ignore[no-untyped-def]
    plan = research_plan(topic=topic, model=model)
    assert plan[0] == topic and len(plan) == settings.RESEARCH_SUBQUERIES[model]
    topic_words = {word.strip("?,").casefold() for word in topic.split()}
    for question in plan[1:]:
        assert question[:1].isupper() and question.endswith("?"), question
        assert question.split()[0] in {"What", "How", "Which", "Who", "Where", "When"}, question
        assert len(topic_words & {w.strip("?,").casefold() for w in question.split()} - {"the", "of", "and"}) >= 1


def test_the_subject_and_its_links_are_asked_in_the_topics_words():  # type: ignore[no-untyped-def]
    plan = research_plan(topic="Marie Curie and the discovery of polonium", model="ponder")
    assert plan[1] == "What is known about Marie Curie?"
    assert "How are Marie Curie and the discovery of polonium related?" in plan
    choir = research_plan(topic=TOPICS[1], model="ponder")
    assert choir[1] == "What is known about the Brackenfield Choir?"
    assert "How are the Brackenfield Choir and new organ related?" in choir  # a verb ends a phrase: no "raise money"
    listed = research_plan(topic=TOPICS[4], model="ponder")
    assert "How are Leeds and food banks related?" in listed  # one phrase of the list, not "banks, soup"


def test_a_topic_dated_by_a_year_keeps_it_and_asks_what_happened_then():  # type: ignore[no-untyped-def]
    plan = research_plan(topic="water quality of the River Teme after 2015", model="snap")
    assert plan[0] == "water quality of the River Teme after 2015"  # the year was cut off as a list number
    assert plan[1] == "What is known about the water quality of the River Teme?"
    assert plan[2] == "What happened to the water quality of the River Teme after 2015?"


def test_phrases_sharing_an_of_tail_are_each_asked_about_with_it():  # type: ignore[no-untyped-def]
    plan = research_plan(topic="origins, members and funding of the Brackenfield Choir", model="ponder")
    assert plan[1:4] == [
        "What is known about the origins of the Brackenfield Choir?",
        "What is known about the members of the Brackenfield Choir?",
        "What is known about the funding of the Brackenfield Choir?",
    ]
    assert plan[4] == "What is the history of the Brackenfield Choir?"
