"""graphs/retrieval.py on real FalkorDB: typed evidence, direct passage search, the typed capped walk, PPR, isolation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from exograph.core.errors import NotFound, ValidationError
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.embeddings import get_embedder
from exograph.graphs.models import WORLD_GRAPH_ID
from exograph.graphs.retrieval import (
    Evidence,
    RetrievalResult,
    graph_walk,
    name_spans,
    personalized_pagerank,
    question_keys,
    retrieve,
    retrieve_for_user,
    title_keys,
)
from exograph.graphs.services import graph_create
from exograph.graphs.types import entity_id_for
from tests.graphs.conftest import QUANTUM_ENTITIES, QUANTUM_RELATIONS, QUANTUM_TEXTS

pytestmark = pytest.mark.django_db

ACQUISITION = "Acme Corporation acquired Borealis Labs in 2019 for an undisclosed sum."
PRODUCT = "Borealis Labs builds the Cygnus rocket engine at its Oslo plant."
CHAIN_QUESTION = "Who owns the company that builds the Cygnus rocket engine?"


def _chain(graph, user, write_doc) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    first = write_doc(
        graph,
        user,
        texts=[ACQUISITION],
        entities=[("Acme Corporation", "organization", ""), ("Borealis Labs", "organization", "")],
        relations=[("Acme Corporation", "acquired", "Borealis Labs")],
        filename="acme.pdf",
    )
    second = write_doc(
        graph,
        user,
        texts=[PRODUCT],
        entities=[("Borealis Labs", "organization", ""), ("Cygnus rocket engine", "product", "")],
        relations=[("Borealis Labs", "builds", "Cygnus rocket engine")],
        filename="borealis.pdf",
    )
    return first, second


def test_graph_mode_returns_the_chain_as_facts_with_their_passages(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Chain", scope=Scope.PRIVATE)
    first, second = _chain(graph, alice, write_doc)
    result = retrieve(actor=alice, graphs=[graph], question=CHAIN_QUESTION, mode="graph", top_k=5, hops=2)
    assert isinstance(result, RetrievalResult) and result.mode == "graph"
    facts = {item.triple: item for item in result.items if item.kind == "fact"}
    acquired = ("Acme Corporation", "acquired", "Borealis Labs")
    builds = ("Borealis Labs", "builds", "Cygnus rocket engine")
    assert acquired in facts and builds in facts
    assert facts[acquired].document_id == first and facts[acquired].chunk_id == f"{first}:0"
    assert facts[acquired].source == "acme.pdf" and facts[acquired].page == 1
    assert facts[builds].document_id == second and facts[builds].chunk_ids == (f"{second}:0",)
    passages = {item.chunk_id: item for item in result.items if item.kind == "passage"}
    assert {f"{first}:0", f"{second}:0"} <= set(passages)
    assert passages[f"{first}:0"].text == ACQUISITION
    # PPR ranks the passage that names the question's entity first.
    ranked = [item.chunk_id for item in result.items if item.kind == "passage"]
    assert ranked[0] == f"{second}:0"

    only = retrieve(actor=alice, graphs=[graph], question=CHAIN_QUESTION, mode="passages", top_k=5)
    assert {item.kind for item in only.items} == {"passage"}
    assert not [item for item in only.items if item.triple is not None]


def test_name_spans_are_the_capitalised_names_a_passage_writes() -> None:
    spans = name_spans("Forced Vengeance is a 1982 film by James Fargo, set in Walker, Texas Ranger's town.")
    assert {"forced vengeance", "1982", "james fargo", "walker, texas ranger", "texas ranger"} <= set(spans)
    assert "is a" not in spans and "film by" not in spans
    assert name_spans("量子计算机使用量子比特") == []  # no case: links come from extraction alone
    assert len(name_spans(" ".join(f"Name{i}" for i in range(1000)), limit=50)) == 50


def test_name_spans_of_an_ascii_text_and_of_one_with_accents_agree() -> None:
    """normalize_name takes a fast path for ASCII names; an accented name gives the same key, in the same order."""
    text = "Forced Vengeance is a 1982 film by James  Fargo,\tset in Walker, Texas Ranger's town (Kadal (1968 Film))."
    assert name_spans("café " + text) == name_spans(text)  # a lowercase word is in no span
    assert name_spans(text.replace("James", "Jámes")) == name_spans(text)  # normalize_name strips the accent
    assert name_spans(text.replace("town", "town\x00")) == name_spans(text)


def test_graph_mode_follows_a_name_the_passage_writes_but_extraction_missed(alice, write_doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The film's passage writes "James Fargo" but its extraction kept only the film; the director's passage
    mentions him. The question names the film only: graph mode reaches the director's passage through the
    written name, and without name links it does not."""
    from exograph.graphs.retrieval import subgraph_index

    graph = graph_create(actor=alice, name="Films", scope=Scope.PRIVATE)
    film = write_doc(
        graph,
        alice,
        texts=["Forced Vengeance is a 1982 American action film directed by James Fargo and set in Hong Kong."],
        entities=[("Forced Vengeance", "work", "")],
    )
    director = write_doc(
        graph,
        alice,
        texts=["James Fargo is a director, born in Republic, Washington; he began as an assistant."],
        entities=[("James Fargo", "person", "")],
    )
    for n in range(12):  # passages that look more like the question than the director's does
        write_doc(
            graph,
            alice,
            texts=[f"Film number {n} was directed by a director born in a town; the film was set in a city."],
            entities=[],
        )
    question = "Where was the director of film Forced Vengeance born?"

    def ranked() -> list[str]:
        result = retrieve(actor=alice, graphs=[graph], question=question, mode="graph", top_k=3)
        return [item.document_id for item in result.items if item.kind == "passage"][:3]

    assert ranked()[:2] == [film, director] or ranked()[:2] == [director, film]
    monkeypatch.setattr(subgraph_index, "name_spans", lambda text, **kwargs: [])
    subgraph_index.indexes_clear()  # the graph's index keeps the names its passages write
    assert director not in ranked()


def test_facts_are_deduplicated_by_the_exact_triple_across_graphs(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    one = graph_create(actor=alice, name="One", scope=Scope.PRIVATE)
    two = graph_create(actor=alice, name="Two", scope=Scope.PRIVATE)
    _chain(one, alice, write_doc)
    _chain(two, alice, write_doc)
    result = retrieve_for_user(actor=alice, question=CHAIN_QUESTION, scope=Scope.PRIVATE, mode="graph", top_k=10)
    triples = [item.triple for item in result.items if item.kind == "fact"]
    assert len(triples) == len(set(triples)) and ("Acme Corporation", "acquired", "Borealis Labs") in triples


def test_a_chunk_that_mentions_no_entity_is_found_by_passage_search(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Plain", scope=Scope.PRIVATE)
    lonely = "The harbour tides rise twice daily around the lighthouse."
    document = write_doc(graph, alice, texts=[lonely, *QUANTUM_TEXTS], entities=QUANTUM_ENTITIES)
    assert not store.store_chunk_mention_names(graph.store_name, chunk_ids=[f"{document}:0"])
    for mode in ("passages", "hybrid", "graph"):
        result = retrieve(actor=alice, graphs=[graph], question="When do the harbour tides rise?", mode=mode)
        found = [item for item in result.items if item.kind == "passage" and item.chunk_id == f"{document}:0"]
        assert found, mode
        assert found[0].text == lonely and found[0].document_id == document and found[0].origin == "private"


def test_walk_caps_each_hop_on_a_star_with_5000_neighbours(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Star", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=["The hub is a busy place."], entities=[("Hub", "place", "")])
    hub = entity_id_for("Hub", "place")
    leaves = [{"id": f"leaf_{i}", "name": f"Leaf {i}"} for i in range(5000)]
    store.query(
        graph.store_name,
        "UNWIND $rows AS r MATCH (h:Entity {id: $hub}) CREATE (l:Entity {id: r.id, name: r.name, type: 'place'}) "
        "CREATE (h)-[:LINKS {count: 1, chunk_ids: [], document_ids: [], contributors: []}]->(l)",
        {"rows": leaves, "hub": hub},
    )
    # The strongest leaf leads one hop further; a MENTIONS-typed edge between entities is never walked.
    store.query(
        graph.store_name,
        "MATCH (h:Entity {id: $hub})-[r:LINKS]->(l:Entity {id: 'leaf_0'}) SET r.count = 9 "
        "CREATE (l)-[:OWNS {count: 1, chunk_ids: [], document_ids: [], contributors: []}]->"
        "(:Entity {id: 'deep', name: 'Deep', type: 'place'}) "
        "CREATE (h)-[:MENTIONS]->(:Entity {id: 'sneaky', name: 'Sneaky', type: 'place'})",
        {"hub": hub},
    )
    relations = graph_walk(graph=graph, seeds=[hub], hops=3, cap=30)
    by_hop = {hop: [r for r in relations if r.hop == hop] for hop in (1, 2, 3)}
    assert len(by_hop[1]) == 10 and len(relations) <= 30
    assert ("leaf_0", "OWNS", "deep") in {(r.source_id, r.type, r.target_id) for r in by_hop[2]}
    assert all(r.type != "MENTIONS" for r in relations) and "sneaky" not in {r.target_id for r in relations}
    result = retrieve(actor=alice, graphs=[graph], question="hub", mode="hybrid", hops=3, budget=200_000)
    assert len([item for item in result.items if item.kind == "relation"]) <= 60
    ranked = retrieve(actor=alice, graphs=[graph], question="hub", mode="graph", hops=2, top_k=5)
    assert len([item for item in ranked.items if item.kind == "fact"]) <= 5


def test_walk_prefers_relations_between_hits(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Between", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=["Alpha and Omega."], entities=[("Alpha", "x", ""), ("Omega", "x", "")])
    alpha, omega = entity_id_for("Alpha", "x"), entity_id_for("Omega", "x")
    store.query(
        graph.store_name,
        "MATCH (a:Entity {id: $a}), (o:Entity {id: $o}) "
        "CREATE (a)-[:KNOWS {count: 1, chunk_ids: [], document_ids: [], contributors: []}]->(o) "
        "WITH a UNWIND range(1, 50) AS i "
        "CREATE (a)-[:LIKES {count: 100, chunk_ids: [], document_ids: [], contributors: []}]->"
        "(:Entity {id: 'n' + toString(i), name: 'N' + toString(i), type: 'x'})",
        {"a": alpha, "o": omega},
    )
    relations = graph_walk(graph=graph, seeds=[alpha, omega], hops=1, cap=3)
    assert len(relations) == 3 and relations[0].type == "KNOWS"


def test_evidence_never_includes_another_accounts_private_items(alice, bob, charlie, write_doc) -> None:  # type: ignore[no-untyped-def]
    mine = graph_create(actor=alice, name="Mine", scope=Scope.PRIVATE)
    bobs = graph_create(actor=bob, name="Bob's", scope=Scope.PRIVATE)
    theirs = graph_create(actor=charlie, name="Charlie's", scope=Scope.PRIVATE)
    shared = graph_create(actor=bob, name="Shared", scope=Scope.WORLD)
    write_doc(mine, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    _chain(bobs, bob, write_doc)
    charlie_doc = write_doc(
        theirs, charlie, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS
    )
    _chain(theirs, charlie, write_doc)
    write_doc(shared, bob, texts=["Qubits decohere quickly at room temperature."], entities=[("Qubit", "concept", "")])
    for mode in ("passages", "hybrid", "graph"):
        private = retrieve_for_user(
            actor=alice, question="qubits and quantum computing", scope=Scope.PRIVATE, mode=mode
        )
        assert private.items and {item.graph_id for item in private.items} == {mine.id}
        assert {item.origin for item in private.items} == {"private"} and private.contributor_ids == []
        world = retrieve_for_user(actor=alice, question="Who owns Borealis Labs? Qubits?", scope=Scope.WORLD, mode=mode)
        assert {item.graph_id for item in world.items} <= {WORLD_GRAPH_ID}
        assert {item.origin for item in world.items} == {"world"} and world.contributor_ids == [bob.pk]
        everything = [*private.items, *world.items]
        assert not [item for item in everything if item.document_id == charlie_doc]
        assert not [item for item in everything if item.triple and "Acme Corporation" in item.triple]
        assert not [item for item in everything if "Acme" in item.text]
    with pytest.raises(NotFound):
        retrieve(actor=alice, graphs=[theirs], question="qubits")
    with pytest.raises(NotFound):
        retrieve_for_user(actor=alice, question="qubits", scope=Scope.PRIVATE, graph_id=theirs.id)


def test_results_are_typed_and_the_budget_holds(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    write_doc(graph, alice, texts=QUANTUM_TEXTS, entities=QUANTUM_ENTITIES, relations=QUANTUM_RELATIONS)
    result = retrieve(actor=alice, graphs=[graph], question="qubits", mode="hybrid", hops=2)
    assert {"entity", "relation", "passage"} <= {item.kind for item in result.items}
    for item in result.items:
        assert isinstance(item, Evidence) and dataclasses.is_dataclass(item)
        assert item.graph_id == graph.id and item.origin == "private" and isinstance(item.score, float)
        if item.kind == "relation":
            assert item.triple and item.chunk_ids and item.document_id and item.source == "paper.pdf"
        if item.kind == "entity":
            assert len(item.entity_ids) == 1
    small = retrieve(actor=alice, graphs=[graph], question="qubits", mode="hybrid", budget=200)
    assert sum(len(item.text) for item in small.items) <= 200 and small.truncated


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("mode", "vibes", "invalid_mode"),
        ("top_k", 0, "invalid_top_k"),
        ("hops", 4, "invalid_hops"),
        ("budget", 10, "invalid_budget"),
        ("question", "  ", "empty_query"),
    ],
)
def test_bad_input_is_a_clear_validation_error(alice, field, value, code) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Q", scope=Scope.PRIVATE)
    arguments = {"question": "qubits", field: value}
    with pytest.raises(ValidationError) as exc:
        retrieve(actor=alice, graphs=[graph], **arguments)
    assert exc.value.code == code


def test_personalized_pagerank_follows_the_seed() -> None:
    # a - b - c and a lone d: with frequent restarts the seed a keeps most mass, c gets some through b, d none.
    edges, seed = [(0, 1, 1.0), (1, 2, 1.0)], np.array([1.0, 0.0, 0.0, 0.0])
    rank = personalized_pagerank(4, edges, seed, damping=0.5)
    assert rank[0] > rank[1] > rank[2] > rank[3] == 0.0
    assert abs(rank.sum() - 1.0) < 1e-6
    # Graph mode's rare restarts carry more of it two hops away, still none to d.
    far = personalized_pagerank(4, edges, seed)
    assert far[2] > rank[2] and far[3] == 0.0 and abs(far.sum() - 1.0) < 1e-6


def test_question_keys_try_longest_names_first() -> None:
    keys = question_keys("Who built the Cygnus Engine?")
    assert keys[0] == "who built the cygnus engine" and "cygnus engine" in keys and "cygnus" in keys
    keys = question_keys("Who produced Walker, Texas Ranger's pilot and Forced Vengeance’s score?")
    assert "walker, texas ranger" in keys and "forced vengeance" in keys and "walker texas ranger" in keys
    assert keys.index("walker, texas ranger") < keys.index("texas ranger")  # longer names first
    # A disambiguated title keeps its qualifier's closing bracket, before a question mark or a possessive.
    assert "kadal (1968 film)" in question_keys("Where did the composer of film Kadal (1968 Film) die?")
    assert "archibald hamilton (1790–1815)" in question_keys("Who was Archibald Hamilton (1790–1815)'s father?")
    assert "gloria (vivaldi)" in name_spans('His "Gloria (Vivaldi)", written in Venice.')


def test_passages_of_one_source_past_the_first_are_damped_in_order() -> None:
    from exograph.graphs.retrieval.rank import damp_same_source

    scores = {"war:0": 1.0, "war:1": 0.9, "war:2": 0.8, "general:0": 0.6, "notes:0": 0.5, "notes:1": 0.4}
    titles = {
        **{f"war:{n}": (f"war-{n}", "Korean War") for n in range(3)},  # three documents, one title
        "general:0": ("general", "Douglas MacArthur"),
        "notes:0": ("notes", ""),  # one untitled document, two chunks
        "notes:1": ("notes", ""),
    }
    damped = damp_same_source(scores, titles)
    assert sorted(damped, key=lambda c: -damped[c]) == ["war:0", "general:0", "notes:0", "war:1", "war:2", "notes:1"]
    assert damped["war:1"] == pytest.approx(0.45) and damped["war:2"] == pytest.approx(0.2)
    assert damped["general:0"] == 0.6 and damped["notes:1"] == pytest.approx(0.2)


def test_title_keys_add_the_bare_name_of_a_disambiguated_title() -> None:
    assert title_keys("William Clemens (film director)") == ["william clemens (film director)", "william clemens"]
    assert title_keys("Orlando furioso (Vivaldi, 1714)") == ["orlando furioso (vivaldi, 1714)", "orlando furioso"]
    assert title_keys("Forced Vengeance") == ["forced vengeance"]
    assert title_keys("(film)") == ["(film)"] and title_keys("") == []
    assert title_keys("Tom (the cat) Smith") == ["tom (the cat) smith"]  # a qualifier ends the title


def test_full_text_ranks_the_rare_word_above_a_repeated_common_one(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    graph = graph_create(actor=alice, name="Words", scope=Scope.PRIVATE)
    texts = [f"Texas ranger number {n} rode across Texas, and Texas rangers rode with him." for n in range(8)]
    rare = "Forced Vengeance is a 1982 film with a plot set in Hong Kong."
    document = write_doc(graph, alice, texts=[*texts, rare], entities=[])
    hits = store.store_chunk_text_hits(
        graph.store_name, text_query=store.fulltext_query("Who produced Forced Vengeance in Texas?"), k=5
    )
    assert hits[0][0] == f"{document}:{len(texts)}"  # BM25: "vengeance" is rare, "texas" is everywhere
    assert all(score > 0 for _, score in hits)


def test_function_words_leave_the_full_text_query_unless_nothing_else_is_left() -> None:
    assert store.fulltext_query("What is the capital of France?") == "capital|france"
    assert store.fulltext_query("The Who") == "the|who"


def test_outermost_keys_link_one_mention_by_its_longest_name() -> None:
    from exograph.graphs.retrieval.graph_mode import outermost_keys

    keys = ["walker, texas ranger", "walker texas ranger", "texas ranger", "texas", "chuck norris", "norris"]
    assert outermost_keys(keys) == ["walker, texas ranger", "chuck norris"]
    assert outermost_keys(["texas", "paris"]) == ["texas", "paris"]  # nothing longer: both kept, in order
    assert outermost_keys(["new york", "york"]) == ["new york"]
    assert outermost_keys(["yorkshire", "york"]) == ["yorkshire", "york"]  # a word, not a substring, nests


def test_vector_names_match_a_question_that_describes_an_entity_in_other_words(alice, write_doc) -> None:  # type: ignore[no-untyped-def]
    """Query-to-entity matching by embedding: the question never spells the name; the entity whose embedded name
    and description mean what it asks comes first, an unrelated one not at all."""
    from exograph.graphs.retrieval.graph_mode import vector_names

    graph = graph_create(actor=alice, name="Vectors", scope=Scope.PRIVATE)
    write_doc(
        graph,
        alice,
        texts=["Halvard Bekk drew the plans of the harbour clock tower in 1911."],
        entities=[
            ("Halvard Bekk", "person", "Norwegian architect who designed buildings"),
            ("Saltwater Bakery", "organization", "a shop that sells bread and cakes"),
        ],
    )
    question = "Which Norwegian architect designed buildings?"
    found = vector_names(graph.store_name, [float(x) for x in get_embedder().embed_one(question)], k=5)
    assert list(found)[0] == "halvard bekk" and found["halvard bekk"] >= 0.5
    assert "saltwater bakery" not in found


def test_name_links_tie_a_short_name_to_the_longer_names_that_contain_it(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from exograph.graphs.retrieval import graph_mode

    monkeypatch.setattr(graph_mode, "NAME_LINK", 2.0)
    nodes: dict[str, int] = {}

    def node(key: str) -> int:
        return nodes.setdefault(key, len(nodes))

    keys = ["hepburn", "audrey hepburn", "katharine hepburn", "audrey", "of the", "house of the dragon", "burn"]
    edges = graph_mode.name_links(keys, node)
    named = {(k1, k2, w) for a, b, w in edges for k1 in nodes if nodes[k1] == a for k2 in nodes if nodes[k2] == b}
    assert ("n:hepburn", "n:audrey hepburn", 1.0) in named  # shared by the two longer names
    assert ("n:hepburn", "n:katharine hepburn", 1.0) in named
    assert ("n:audrey", "n:audrey hepburn", 2.0) in named
    assert not any(short == "n:of the" or short == "n:burn" for short, _, _ in named)  # stopwords; a word part


@pytest.mark.parametrize("typed", [0, 1])
def test_fact_matching_seeds_the_name_a_question_describes_by_its_link(  # type: ignore[no-untyped-def]
    alice, write_doc, monkeypatch, typed
) -> None:
    """Query-to-fact matching: the question names the singer and asks for her husband; her passage names five
    people, and the other four's passages look more like the question than her husband's does. The fact
    "Mira Castell married Tomas Vennard" matches "husband of Mira Castell" (other words than the fact's), seeds
    Tomas Vennard, and his passage ranks above the other four; without the fact match it does not. So with typed
    facts only (the married link alone)."""
    from exograph.graphs.retrieval import facts, graph_mode

    monkeypatch.setattr(facts, "FACT_MATCH_TYPED", typed)

    graph = graph_create(actor=alice, name="Singers", scope=Scope.PRIVATE)
    people = ["Hollis Brandt", "Petra Lune", "Anselm Grove", "Dario Fenn"]
    singer = write_doc(
        graph,
        alice,
        texts=[
            "Mira Castell, a soprano, married Tomas Vennard in 1950; she toured with Hollis Brandt, Petra Lune, "
            "Anselm Grove and Dario Fenn."
        ],
        entities=[("Mira Castell", "person", ""), ("Tomas Vennard", "person", "")]
        + [(name, "person", "") for name in people],
        relations=[("Mira Castell", "MARRIED", "Tomas Vennard")]
        + [("Mira Castell", "RELATED_TO", name) for name in people],
    )
    husband = write_doc(
        graph,
        alice,
        texts=["Tomas Vennard grew up by the docks of Kellhaven, where his parents kept a bakery."],
        entities=[("Tomas Vennard", "person", ""), ("Kellhaven", "location", "")],
    )
    others = [
        write_doc(
            graph,
            alice,
            texts=[f"{name} was born in Ostrava to a family of singers, and married young there."],
            entities=[(name, "person", ""), ("Ostrava", "location", "")],
        )
        for name in people
    ]
    question = "Where was the husband of Mira Castell born?"
    vector = [float(x) for x in get_embedder().embed_one(question)]

    def above_the_others() -> bool:
        result = retrieve(actor=alice, graphs=[graph], question=question, mode="graph", top_k=10)
        ranked = [item.document_id for item in result.items if item.kind == "passage"]
        return husband in ranked and all(other not in ranked[: ranked.index(husband)] for other in others)

    monkeypatch.setattr(facts, "FACT_MATCH", 1)
    seeds = facts.fact_seeds(graph.store_name, chunk_ids=[f"{singer}:0"], vector=vector, embedder=get_embedder())
    assert set(seeds) == {"mira castell", "tomas vennard"}  # the best fact of five the singer's passage holds
    monkeypatch.setattr(facts, "FACT_MATCH", 5)
    monkeypatch.setattr(graph_mode, "FACT_MATCH", 5)
    assert above_the_others()
    monkeypatch.setattr(facts, "FACT_MATCH", 0)
    monkeypatch.setattr(graph_mode, "FACT_MATCH", 0)
    assert not above_the_others()


def test_fact_text_reads_a_relation_as_words() -> None:
    from exograph.graphs.retrieval.facts import fact_text

    assert fact_text("Acme Corporation", "ACQUIRE", "Borealis Labs") == "Acme Corporation acquire Borealis Labs"
    assert fact_text("Acme Corporation", "RELATED_TO", "Oslo") == "Acme Corporation Oslo"
    assert fact_text("Kadal", "DIRECTED_BY", "Ravi") == "Kadal directed by Ravi"


def test_synonym_edges_reach_the_passage_that_writes_the_other_name(alice, write_doc, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Synonym edges: the question writes "USSR", the poet's passage "the Soviet Union" (no alias ties them, their
    entity embeddings lie close); passages that look more like the question name no one. The seed's synonym
    brings the poet's passage into the first three; without synonym edges it is not there."""
    from exograph.graphs.retrieval import graph_mode, synonyms

    graph = graph_create(actor=alice, name="Synonyms", scope=Scope.PRIVATE)
    write_doc(
        graph,
        alice,
        texts=["The USSR signed a grain agreement with Canada in 1963."],
        entities=[("USSR", "location", ""), ("Canada", "location", "")],
    )
    poet = write_doc(
        graph,
        alice,
        texts=["Joseph Brodsky left the Soviet Union for Vienna in June, then taught in Michigan."],
        entities=[("Joseph Brodsky", "person", ""), ("Soviet Union", "location", ""), ("Vienna", "location", "")],
    )
    for n in range(12):
        write_doc(
            graph,
            alice,
            texts=[f"Poet number {n} was expelled in 1972 from a country and wrote poems in exile."],
            entities=[],
        )
    question = "Which poet was expelled from the USSR in 1972?"
    found = synonyms.synonym_names(graph.store_name, {"ussr": [entity_id_for("USSR", "location")]})
    assert found == []  # off
    monkeypatch.setattr(synonyms, "SYNONYM_K", 5)
    found = synonyms.synonym_names(graph.store_name, {"ussr": [entity_id_for("USSR", "location")]})
    assert [(key, other) for key, other, _ in found] == [("ussr", "soviet union")]  # not Canada, Vienna...

    def top3() -> list[str]:
        result = retrieve(actor=alice, graphs=[graph], question=question, mode="graph", top_k=3)
        return [item.document_id for item in result.items if item.kind == "passage"][:3]

    monkeypatch.setattr(graph_mode, "SYNONYM_K", 5)
    assert poet in top3()
    monkeypatch.setattr(graph_mode, "SYNONYM_K", 0)
    assert poet not in top3()
