"""Extraction: the offline extractor, resolution, and the llm extractor against a fake OpenAI server."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from exograph.core.errors import PermanentError, TransientError
from exograph.core.llm import LLMError, llm_chat_complete
from exograph.documents.chunking import chunk_blocks
from exograph.documents.extraction import (
    ENTITY_TYPES,
    Entity,
    Extraction,
    LLMExtractor,
    Mention,
    OfflineExtractor,
    document_extract,
    extraction_resolve,
    name_normalise,
)
from exograph.documents.models import DocumentType
from exograph.documents.parsing import document_text_extract
from tests.documents.conftest import fixture_bytes
from tests.fakes.llm_chat import FakeOpenAIChatServer


@dataclass(frozen=True)
class C:
    id: str
    text: str


SAMPLE = [
    C(
        "c1",
        "Dr. Andreas Gal designed TraceMonkey at Mozilla Corporation in 2009. "
        "The Association of Computational Linguistics (ACL) published the paper. "
        "Mozilla Corporation acquired Pixel Labs Inc. The University of California funded the work.",
    ),
    C("c2", "TraceMonkey uses Trace Trees. Mozilla Corporation is based in Mountain View City. ACL met in 2009."),
]


def _by_name(extraction):
    return {e.name: e for e in extraction.entities}


def test_offline_extracts_typed_entities():
    entities = _by_name(document_extract(SAMPLE, extractor=OfflineExtractor()))
    assert entities["Andreas Gal"].type == "PERSON"
    assert entities["Mozilla Corporation"].type == "ORGANIZATION"
    assert entities["Pixel Labs Inc"].type == "ORGANIZATION"
    assert entities["University of California"].type == "ORGANIZATION"
    assert entities["2009"].type == "DATE"
    assert entities["Mountain View City"].type == "LOCATION"


def test_offline_relations_from_verbs_else_cooccurrence():
    extraction = document_extract(SAMPLE, extractor=OfflineExtractor())
    typed = {(r.source, r.type, r.target) for r in extraction.relations}
    assert ("Andreas Gal", "DESIGN", "TraceMonkey") in typed
    assert ("Mozilla Corporation", "ACQUIRE", "Pixel Labs Inc") in typed
    assert ("TraceMonkey", "USE", "Trace Trees") in typed
    related = [r for r in extraction.relations if r.type == "RELATED_TO"]
    assert related and all(r.weight >= 1 for r in related)
    pairs = {frozenset((r.source, r.target)) for r in related}
    assert frozenset(("2009", "Andreas Gal")) in pairs
    # a pair with a verb relation gets no extra RELATED_TO edge
    assert frozenset(("Andreas Gal", "TraceMonkey")) not in pairs


def test_acronym_definition_merges_into_the_long_name_as_alias():
    entities = _by_name(document_extract(SAMPLE, extractor=OfflineExtractor()))
    assert "ACL" in entities["Association of Computational Linguistics"].aliases
    assert "ACL" not in entities


def test_mentions_point_at_chunks():
    extraction = document_extract(SAMPLE, extractor=OfflineExtractor())
    c2 = {m.name for m in extraction.mentions if m.chunk_id == "c2"}
    assert {"TraceMonkey", "Trace Trees", "Mozilla Corporation", "Association of Computational Linguistics"} <= c2


def test_resolution_merges_by_normalised_name_and_keeps_aliases():
    raw = Extraction(
        entities=[
            Entity("The Mozilla Corporation", "CONCEPT"),
            Entity("Mozilla Corporation", "ORGANIZATION"),
            Entity("mozilla  corporation", "CONCEPT"),
            Entity("Mozilla Corporation", "ORGANIZATION"),
        ],
        mentions=[Mention("c1", "mozilla  corporation", "CONCEPT")],
    )
    resolved = extraction_resolve(raw)
    assert len(resolved.entities) == 1
    entity = resolved.entities[0]
    assert entity.name == "Mozilla Corporation" and entity.type == "ORGANIZATION"
    assert set(entity.aliases) == {"The Mozilla Corporation", "mozilla  corporation"}
    assert resolved.mentions == [Mention("c1", "Mozilla Corporation", "ORGANIZATION")]
    assert name_normalise("Mozilla’s") == name_normalise("mozilla")


def test_offline_on_a_real_paper_finds_its_names():
    blocks = document_text_extract(
        data=fixture_bytes("pdf/pm_naacl06-shinyama.pdf"), content_type=DocumentType.PDF, pages=8
    ).blocks
    chunks = chunk_blocks(document_id="d", blocks=blocks, max_tokens=200, overlap_tokens=40)
    extraction = document_extract(chunks, extractor=OfflineExtractor())
    names = {e.name for e in extraction.entities}
    assert "New York University" in " ".join(names)
    assert "Information Extraction" in names
    assert any("IE" in e.aliases for e in extraction.entities if e.name == "Information Extraction")
    chunk_ids = {c.id for c in chunks}
    assert {m.chunk_id for m in extraction.mentions} <= chunk_ids
    assert any(r.type != "RELATED_TO" for r in extraction.relations)


# --- llm ------------------------------------------------------------------------------------


@pytest.fixture
def llm(settings):
    with FakeOpenAIChatServer(api_key="sk-test") as server:
        server.default = (200, '{"entities": [], "relations": []}')
        settings.LLM_BASE_URL = server.base_url
        settings.LLM_API_KEY = "sk-test"
        settings.LLM_MODEL = "fake-model"
        settings.LLM_MAX_RETRIES = 0  # each test queues exactly the replies it means
        yield server


GOOD = json.dumps(
    {
        "entities": [
            {"name": "Andreas Gal", "type": "PERSON", "description": "A researcher."},
            {"name": "TraceMonkey", "type": "PRODUCT", "description": "A JIT compiler."},
        ],
        "relations": [{"source": "Andreas Gal", "target": "TraceMonkey", "type": "designed"}],
    }
)


def test_llm_client_speaks_chat_completions(llm):
    llm.reply('{"ok": true}')
    reply = llm_chat_complete(messages=[{"role": "user", "content": "hi"}], json_schema={"name": "x", "schema": {}})
    assert reply.content == '{"ok": true}' and reply.model == "fake-model"
    sent = llm.bodies[0]
    assert sent["model"] == "fake-model"
    assert sent["response_format"]["type"] == "json_schema"
    assert llm.requests[0].header("Authorization") == "Bearer sk-test"


def test_llm_client_5xx_is_a_transient_error(llm):
    llm.reply("", status=503)
    with pytest.raises(LLMError) as caught:
        llm_chat_complete(messages=[{"role": "user", "content": "hi"}])
    assert isinstance(caught.value, TransientError)


def test_llm_client_retries_as_configured_through_the_sdk(llm, settings):
    """LLM_MAX_RETRIES is honoured (the hand-rolled client ignored it and failed on the first 503)."""
    settings.LLM_MAX_RETRIES = 1
    llm.reply("", status=503)
    llm.reply('{"ok": true}')
    reply = llm_chat_complete(messages=[{"role": "user", "content": "hi"}])
    assert reply.content == '{"ok": true}' and len(llm.requests) == 2
    llm.reply("", status=503)
    llm.reply("", status=503)
    with pytest.raises(TransientError):
        llm_chat_complete(messages=[{"role": "user", "content": "hi"}])
    assert len(llm.requests) == 4  # one try and one retry, then the error


def test_llm_output_is_checked_by_the_schema_the_model_is_sent():
    """One pydantic model gives the schema sent and the check applied: lower-case types are taken, blank names,
    unknown types and dangling relations are not, extra keys from a lax server are ignored."""
    from exograph.documents.extraction.llm import EXTRACTION_SCHEMA, InvalidLLMOutput, llm_output_validate

    entity = EXTRACTION_SCHEMA["$defs"]["ExtractedEntity"]
    assert set(entity["required"]) == {"name", "type", "description"} and entity["additionalProperties"] is False
    assert "PERSON" in entity["properties"]["type"]["enum"]
    ok = {"entities": [{"name": " Ada ", "type": "person", "description": "x" * 900, "note": 1}], "relations": []}
    entities, relations = llm_output_validate(json.dumps(ok))
    assert (entities[0].name, entities[0].type, len(entities[0].description), relations) == ("Ada", "PERSON", 500, [])
    for bad in (
        {"entities": [{"name": "  ", "type": "PERSON"}]},
        {"entities": [{"name": "Ada", "type": "SPACESHIP"}]},
        {
            "entities": [{"name": "Ada", "type": "PERSON"}],
            "relations": [{"source": "Ada", "target": "Bob", "type": "x"}],
        },
        {"relations": []},
    ):
        with pytest.raises(InvalidLLMOutput):
            llm_output_validate(json.dumps(bad))


def test_llm_extractor_uses_valid_output(llm):
    llm.reply(GOOD)
    extraction = document_extract(SAMPLE[:1], extractor=LLMExtractor())
    entities = _by_name(extraction)
    assert entities["TraceMonkey"].type == "PRODUCT"
    assert entities["TraceMonkey"].description == "A JIT compiler."
    assert [(r.source, r.type, r.target) for r in extraction.relations] == [("Andreas Gal", "DESIGNED", "TraceMonkey")]
    assert len(llm.requests) == 1
    schema = llm.bodies[0]["response_format"]["json_schema"]["schema"]
    assert set(schema["required"]) == {"entities", "relations"}


def test_llm_invalid_output_is_retried_once(llm):
    llm.reply("this is not json")
    llm.reply(GOOD)
    extraction = document_extract(SAMPLE[:1], extractor=LLMExtractor())
    assert len(llm.requests) == 2
    assert _by_name(extraction)["TraceMonkey"].type == "PRODUCT"


def test_llm_invalid_twice_falls_back_to_offline(llm):
    bad_type = json.dumps({"entities": [{"name": "X", "type": "SPACESHIP", "description": ""}], "relations": []})
    llm.reply("{}")
    llm.reply(bad_type)
    extraction = document_extract(SAMPLE[:1], extractor=LLMExtractor())
    assert len(llm.requests) == 2
    entities = _by_name(extraction)
    assert entities["Mozilla Corporation"].type == "ORGANIZATION"  # the offline result
    assert "X" not in entities
    assert [w["code"] for w in extraction.warnings] == ["llm_extractor_fallback"]  # said, not silent


def test_llm_relation_to_unknown_entity_is_invalid(llm):
    dangling = json.dumps(
        {
            "entities": [{"name": "A Corp", "type": "ORGANIZATION", "description": ""}],
            "relations": [{"source": "A Corp", "target": "Nobody", "type": "OWNS"}],
        }
    )
    llm.reply(dangling)
    llm.reply(dangling)
    extraction = document_extract(SAMPLE[:1], extractor=LLMExtractor())
    assert "A Corp" not in _by_name(extraction)


def test_llm_down_is_a_transient_error_for_the_task_to_retry_not_a_silent_fallback(settings):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    settings.LLM_MODEL = "fake-model"
    with pytest.raises(TransientError):
        document_extract(SAMPLE[:1], extractor=LLMExtractor())


def test_llm_refusal_falls_back_to_offline_with_a_warning_and_stops_asking(llm):
    llm.default = (401, "")
    extraction = document_extract(SAMPLE, extractor=LLMExtractor())
    assert len(llm.requests) == 1  # a refusal is permanent: the other passages are not sent
    assert _by_name(extraction)["Andreas Gal"].type == "PERSON"  # the offline result
    assert [w["code"] for w in extraction.warnings] == ["llm_extractor_fallback"]
    assert f"{len(SAMPLE)} of {len(SAMPLE)} passages" in extraction.warnings[0]["message"]
    assert "401" in extraction.warnings[0]["message"]


def test_llm_client_4xx_is_a_permanent_error(llm):
    llm.reply("", status=400)
    with pytest.raises(PermanentError) as caught:
        llm_chat_complete(messages=[{"role": "user", "content": "hi"}])
    assert not isinstance(caught.value, TransientError)


def test_long_documents_drop_single_mention_concepts_but_keep_names():
    from exograph.documents.extraction import PRUNE_MIN_CHUNKS, extraction_prune

    raw = Extraction(
        entities=[
            Entity("Line Five", "CONCEPT"),
            Entity("Tax Credit", "CONCEPT"),
            Entity("Revenue Office", "ORGANIZATION"),
        ],
        mentions=[
            Mention("c1", "Line Five", "CONCEPT"),
            Mention("c1", "Tax Credit", "CONCEPT"),
            Mention("c2", "Tax Credit", "CONCEPT"),
            Mention("c3", "Revenue Office", "ORGANIZATION"),
        ],
    )
    short = extraction_prune(raw, chunk_count=PRUNE_MIN_CHUNKS)
    assert len(short.entities) == 3
    long = extraction_prune(raw, chunk_count=PRUNE_MIN_CHUNKS + 1)
    assert {e.name for e in long.entities} == {"Tax Credit", "Revenue Office"}
    assert "Line Five" not in {m.name for m in long.mentions}


# --- issue 25: text that is text, junk entities, one node per thing ---------------------------------

# tracemonkey-pldi-09.pdf: a chart's glyphs as the parser reads them (core.language flags the passage).
GLYPHS = (
    '!"# $!"# %!"# &!"# )*+,-./#0$1$23# )*+45678#0$1923# :,,/==+.>?:6;+<6//=#0!1923# -<>2.B897<>.>8H2#3$4$56# '
    ".><57=+).><+.><=+>?+.;</#0$C1C23# ,5?<65FG5E+6/,-6=>B/#0(1!23# K?</676/<# L5?><56# M/,56*# N547>F/# "
    "N:FF#O6:,/# M-?#O6:,/# TOED TOED Trace Recorder"
)


def test_glyph_passages_are_kept_out_of_extraction():
    chunks = [C("g", GLYPHS), C("t", "Andreas Gal built the Trace Recorder at Mozilla Corporation.")]
    extraction = document_extract(chunks, extractor=OfflineExtractor())
    assert {m.chunk_id for m in extraction.mentions} == {"t"}
    names = {e.name for e in extraction.entities}
    assert "Mozilla Corporation" in names and not names & {"B897", "TOED", "L5", "M-"}


def test_variants_merge_into_one_entity_with_their_forms_as_aliases():
    raw = Extraction(
        entities=[
            Entity("trace trees", "CONCEPT"),
            Entity("Trace Trees", "CONCEPT"),
            Entity("trace tree", "CONCEPT"),
            Entity("Babbage’s", "PERSON"),
            Entity("Jones", "PERSON"),
            Entity("Jone", "PERSON"),
        ],
        mentions=[
            Mention("c1", "trace trees", "CONCEPT"),
            Mention("c2", "Trace Trees", "CONCEPT"),
            Mention("c1", "Babbage’s", "PERSON"),
            Mention("c2", "Babbage", "PERSON"),
        ],
    )
    resolved = _by_name(extraction_resolve(raw))
    assert set(resolved) == {"Trace Tree", "Babbage", "Jones", "Jone"}  # names are never de-pluralised
    assert set(resolved["Trace Tree"].aliases) == {"trace trees", "Trace Trees", "trace tree"}
    assert resolved["Babbage"].aliases == ["Babbage’s"]
    assert {m.name for m in extraction_resolve(raw).mentions} == {"Trace Tree", "Babbage"}


def test_a_possessive_or_plural_in_one_document_gets_the_same_graph_node_as_the_plain_form_in_another():
    from exograph.graphs.types import entity_id_for

    first = extraction_resolve(Extraction(entities=[Entity("Babbage's", "PERSON"), Entity("trace trees", "CONCEPT")]))
    second = extraction_resolve(Extraction(entities=[Entity("Babbage", "PERSON"), Entity("trace tree", "CONCEPT")]))
    assert {entity_id_for(e.name, e.type) for e in first.entities} == {
        entity_id_for(e.name, e.type) for e in second.entities
    }
    assert {a for e in first.entities for a in e.aliases} == {"Babbage's", "trace trees"}


# --- issue 25 §1: typed names a reader would accept (the bundled NER model, extraction/ner.py) ----------------

# MuSiQue paragraphs whose keyphrases were junk entities ("film stars Audrey", "Hepburn as Eliza",
# "beating Becky Brewerton") before the NER model.
FILM = C(
    "f",
    "The film stars Audrey Hepburn as Eliza Doolittle and Rex Harrison as Henry Higgins, with Stanley Holloway, "
    "Gladys Cooper and Wilfrid Hyde - White in supporting roles. A critical and commercial success, it won eight "
    "Academy Awards, including Best Picture, Best Actor, and Best Director. In 1998, the American Film Institute "
    "named it the 91st greatest American film of all time.",
)
GOLF = C(
    "g",
    "Luna was born in Rome, Italy and turned professional in 2001. She won her first event on the Ladies European "
    "Tour in 2004 at the Tenerife Ladies Open, beating Becky Brewerton down the stretch.",
)
BREAKFAST = C(
    "b",
    "Breakfast at Tiffany's is a 1961 American romantic comedy film directed by Blake Edwards and written by George "
    "Axelrod. The film was initially released on October 5, 1961 by Paramount Pictures. It earned $14 million.",
)


def test_offline_types_people_organisations_places_dates_and_quantities():
    entities = {
        e.name: e.type for e in document_extract([FILM, GOLF, BREAKFAST], extractor=OfflineExtractor()).entities
    }
    assert {entities[n] for n in ("Audrey Hepburn", "Rex Harrison", "Becky Brewerton", "Blake Edwards")} == {"PERSON"}
    assert entities["American Film Institute"] == entities["Paramount Pictures"] == "ORGANIZATION"
    assert entities["Rome"] == entities["Italy"] == "LOCATION"
    assert entities["October 5, 1961"] == entities["2004"] == "DATE"
    assert entities["$14 million"] == "QUANTITY"
    assert "WORK" in ENTITY_TYPES and "QUANTITY" in ENTITY_TYPES


def test_offline_keeps_no_sentence_fragments():
    names = {e.name for e in document_extract([FILM, GOLF, BREAKFAST], extractor=OfflineExtractor()).entities}
    fragments = {"film stars Audrey", "Hepburn as Eliza", "beating Becky Brewerton", "Becky Brewerton down"}
    assert not {n for n in names if any(f in n for f in fragments)}
    assert "Best Picture, Best Actor" not in names  # a list run together is not one name
    assert not names & {"91st", "eight", "first"}  # counts and ordinals are not things


def test_keyphrase_fragment_rule():
    from exograph.documents.extraction.offline import _fragment

    known = {"audrey hepburn": "PERSON", "lotharingia": "LOCATION"}
    words = {"audrey", "hepburn", "lotharingia"}
    assert _fragment("film stars Audrey", known, words)
    assert _fragment("Lotharingia by marriage", known, words)
    assert _fragment("marriage to Lothair", known, words)
    assert _fragment("trees back", known, words)
    assert not _fragment("Audrey Hepburn", known, words)
    assert not _fragment("American writer", known, words)  # a name and common nouns: joins comparison questions
    assert not _fragment("trace trees", known, words)
    assert _fragment("Amy Hobby made", {"amy hobby": "PERSON"}, {"amy", "hobby"})
    assert _fragment("Bharathiraja starring", {}, set())
    # the end of a longer name and common nouns is a window over a heading, not a thing
    assert _fragment("Lines annual report", {"tarn lines": "ORGANIZATION"}, {"tarn", "lines"})
    assert not _fragment("Tarn Lines timetable", {"tarn lines": "ORGANIZATION"}, {"tarn", "lines"})
    assert not _fragment("LIR trace", {"ssa lir": "ORGANIZATION"}, {"ssa", "lir"})  # an acronym stands alone


def test_a_heading_gives_its_name_not_windows_over_it():
    # A DOCX's title line "Northwind Ferries annual note": YAKE's three-word windows over it were concepts.
    note = C(
        "n",
        "Northwind Ferries annual note\n\nNorthwind Ferries operates the crossing between Port Avel and the island "
        "of Skerra. The company is owned by Halvard Group, a holding company based in Bergen.\n\nHalvard Group was "
        "founded by Ingrid Solberg in 1962.",
    )
    names = {e.name for e in document_extract([note], extractor=OfflineExtractor()).entities}
    assert {"Northwind Ferries", "Halvard Group", "Ingrid Solberg"} <= names, names
    assert not names & {"Northwind Ferries annual", "Ferries annual", "Ferries annual note"}, names


def test_a_name_stops_at_its_last_capital_and_long_documents_prune_one_off_quantities():
    from exograph.documents.extraction import extraction_prune
    from exograph.documents.extraction.ner import ner_spans

    (spans,) = ner_spans(["A Assembleia Geral nos termos do CNIG reúne-se em Lisboa."]) or [[]]
    assert "Assembleia Geral" in {s.name for s in spans} and not any(s.name.endswith(" nos") for s in spans)
    raw = Extraction(
        entities=[Entity("$14 million", "QUANTITY"), Entity("Audrey Hepburn", "PERSON")],
        mentions=[Mention("c1", "$14 million", "QUANTITY"), Mention("c1", "Audrey Hepburn", "PERSON")],
    )
    assert {e.name for e in extraction_prune(raw, chunk_count=30).entities} == {"Audrey Hepburn"}


def test_without_the_model_the_rules_still_extract(monkeypatch):
    from exograph.documents.extraction import offline

    monkeypatch.setattr(offline, "ner_read", lambda texts: None)
    entities = _by_name(document_extract(SAMPLE, extractor=OfflineExtractor()))
    assert entities["Andreas Gal"].type == "PERSON" and entities["Mozilla Corporation"].type == "ORGANIZATION"


def test_the_model_s_cuts_are_put_back_dates_of_a_range_peers_and_rulers_nationalities_kept():
    from exograph.documents.extraction.ner import ner_spans

    (spans,) = ner_spans(
        [
            "Stefano Vanzina( 19 January 1917 – 13 March 1988) was an Italian film director. "
            "Scott R. Dunlap( June 20, 1892 – March 30, 1970) was an American producer. "
            "Wingfield was the son of Richard Wingfield, 1st Viscount Powerscourt, by Dorothy Beresford Rowley. "
            "Marie of Burgundy met Richard I of Capua. John Smith of London won an award for the film "
            "The Picture of Dorian Gray, which topped the U.S. charts. "
            "Walker was born in Frederick, Maryland, and toured Spain, Portugal, Greece. "
            "She married Sir Edward Buxton, 2nd Baronet."
        ]
    ) or [[]]
    found = {(s.name, s.type) for s in spans}
    assert {("19 January 1917", "DATE"), ("13 March 1988", "DATE")} <= found  # not "March 1988"
    assert {("June 20, 1892", "DATE"), ("March 30, 1970", "DATE")} <= found  # a range is its two dates
    assert ("Richard Wingfield, 1st Viscount Powerscourt", "PERSON") in found
    assert {("Marie of Burgundy", "PERSON"), ("Richard I of Capua", "PERSON")} <= found
    assert ("John Smith", "PERSON") in found  # a full name "of London" is where he is from
    assert ("The Picture of Dorian Gray", "WORK") in found  # a work's title keeps its article mid-sentence
    assert "U.S." in {s.name for s in spans}
    assert {("Italian", "CONCEPT"), ("American", "CONCEPT")} <= found  # nationalities join, untyped
    assert {("Frederick", "LOCATION"), ("Maryland", "LOCATION")} <= found  # joined, "Frederick" was lost as a node
    assert ("Sir Edward Buxton, 2nd Baronet", "PERSON") in found or ("Edward Buxton, 2nd Baronet", "PERSON") in found
    assert {("Spain", "LOCATION"), ("Portugal", "LOCATION"), ("Greece", "LOCATION")} <= found  # a list stays apart


def test_the_display_name_drops_a_leading_article_but_a_titles_own() -> None:
    from exograph.documents.extraction import Entity, Extraction, Mention, extraction_resolve

    raw = Extraction(
        entities=[
            Entity("the Quarry Guild", "ORGANIZATION"),
            Entity("the Quarry Guild", "ORGANIZATION"),
            Entity("Quarry Guild", "ORGANIZATION"),
            Entity("An Orchard Lane", "LOCATION"),
            Entity("The Glass Harvest", "WORK"),
        ],
        mentions=[Mention("c1", "the Quarry Guild", "ORGANIZATION"), Mention("c2", "An Orchard Lane", "LOCATION")],
        relations=[],
    )
    resolved = extraction_resolve(raw)
    names = {e.name: e for e in resolved.entities}
    assert set(names) == {"Quarry Guild", "Orchard Lane", "The Glass Harvest"}
    assert "the Quarry Guild" in names["Quarry Guild"].aliases  # the form written stays: provenance
    assert {m.name for m in resolved.mentions} == {"Quarry Guild", "Orchard Lane"}


def test_part_of_speech_tags_cut_hedges_sentence_openers_and_clauses() -> None:
    from exograph.documents.extraction.ner import ner_read, ner_spans
    from exograph.documents.extraction.offline import _clause

    (spans,) = ner_spans(
        ["The ferry survey found that about 40% of riders paid at least $2,500 a year. "
         "Later the Harbour Board approved a new pier for the town."]
    ) or [[]]  # fmt: skip
    names = {s.name for s in spans}
    assert {"40%", "$2,500"} <= names and not any(n.startswith(("about", "at least")) for n in names)
    assert not any(n.startswith("Later") for n in names)
    text = (
        "Storm Odalys struck the eastern shore. Obtaining flood extents from radar helps the ferry timetable planners."
    )
    read = ner_read([text])
    assert _clause("Odalys struck", [text], read)  # a name and a finite verb: a clause
    assert _clause("Obtaining flood extents", [text], read)  # a verb first
    assert not _clause("ferry timetable planners", [text], read)
    assert not _clause("flood extents", [text], read)


def test_a_letter_and_digits_code_written_once_is_not_a_name() -> None:
    text = (
        "The loop compares Q12 with the bound. When Q12 grows past the bound, the search stops; "
        "a threshold P7 < score links the pair."
    )
    names = {e.name for e in document_extract([C("c1", text)], extractor=OfflineExtractor()).entities}
    assert "Q12" in names and "P7" not in names


def test_a_place_written_with_its_region_keeps_the_pair_as_an_alias_but_a_list_does_not() -> None:
    text = (
        "The poet was born in Dayton, Ohio, and later taught in Boston. "
        "Its crews came from Norway, Denmark, Finland and Estonia."
    )
    entities = _by_name(document_extract([C("c1", text)], extractor=OfflineExtractor()))
    assert "Dayton, Ohio" in entities["Dayton"].aliases and "Ohio" in entities
    assert not any("," in alias for name in ("Norway", "Denmark", "Finland") for alias in entities[name].aliases)


def test_a_measure_is_no_concept():
    # "a reef eleven miles south-west of Tiree": YAKE's windows over a distance were concepts ("reef eleven")
    note = C(
        "m",
        "# Skerryvore notes\n\nSkerryvore Lighthouse stands on a reef eleven miles south-west of Tiree. It was "
        "designed by Alan Stevenson and first lit in 1844. At 48 metres it is the tallest lighthouse in Scotland.\n\n"
        "The keepers were withdrawn in 1984, when the light was automated by the Northern Lighthouse Board.\n",
    )
    names = {e.name.casefold() for e in document_extract([note], extractor=OfflineExtractor()).entities}
    assert {"skerryvore lighthouse", "alan stevenson", "northern lighthouse board"} <= names, names
    assert not {n for n in names if "eleven" in n or "reef" in n}, names  # was "reef eleven", "reef eleven mile"
