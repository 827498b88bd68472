"""The engine's types and tunables: evidence items, a graph's read before ranking, and the settings chosen on the
development halves (bench/retrieval.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from exograph.graphs.models import Graph

Mode = Literal["passages", "hybrid", "graph"]
Kind = Literal["entity", "relation", "fact", "passage"]
Origin = Literal["private", "world"]

MODES: tuple[str, ...] = ("passages", "hybrid", "graph")
MAX_TOP_K = 100
MAX_HOPS = 3
MIN_BUDGET = 200
MAX_BUDGET = 200_000
DEFAULT_BUDGET = 8_000
PASSAGE_CHARS = 1_200
WALK_CAP = 60  # relations a walk may return per graph, shared equally by the hops
MAX_NGRAM = 6  # longest question n-gram tried as an exact entity name
PER_ENTITY_CHUNKS = 20  # passages pulled per name into the PPR subgraph
NAME_SPANS_PER_PASSAGE = 400  # capitalised name spans a passage may link by (name_spans)
# Names of the first ring's passages read per query: bounds the slowest queries (3,000 ranked the same).
MAX_RING_NAMES = 1_500
# Chosen on the development halves (bench/retrieval.py), one setting for every dataset: the walk restarts with
# 0.2 (HippoRAG's 0.5 lost ~10 R@5 on 2Wiki: the mass must travel from a linked name to its passage and on to the
# passages that one names); the dense hits take a small share (0.2) so they do not drown the chain. Damping 0.9
# with share 0.3 won on 20 questions a set and then did not hold on the larger samples (full MuSiQue dev 69.7 vs
# 69.8, MuSiQue validation on 40 questions 73.1 vs 73.3): not kept (bench/results/retrieval-experiments.md).
PPR_DAMPING = 0.8
# Weight of a passage naming a document's title, shared by that document's passages (a name points at a
# document, not at each of its chunks in full); a mention weighs < 1.
PPR_TITLE_LINK = 8.0
PPR_PASSAGE_SHARE = 0.2  # share of the reset mass given to the dense passage hits (the rest: linked names)
PPR_PASSAGE_SEEDS = 10  # dense hits seeded
PPR_ITERATIONS = 100
# Passages of one source (same document title, or same untitled document) after the first SAME_SOURCE_FREE
# are damped by SAME_SOURCE_DAMP per extra passage: a chain's hops sit in different sources, and a source that
# every hop names would otherwise fill the top ranks with its own passages. Order within a source is kept.
SAME_SOURCE_FREE = 1
SAME_SOURCE_DAMP = 0.5
ALIAS_NAMES = 5  # names a question key that is only an alias links to ("III" -> each album titled "III (...)")
# Query-to-entity matching by embedding (graph mode, vector_names): the nearest entities to the question, at
# this cosine similarity or more, seeded with this share of the reset mass (0 names: off).
ENTITY_VECTOR_NAMES = 0
ENTITY_VECTOR_MIN = 0.5
ENTITY_VECTOR_SHARE = 0.0
# 1: every question n-gram that is a name seeds, nested ones too ("texas" inside "walker texas ranger");
# 0: only the outermost linked names (graph_mode.outermost_keys).
SEED_NESTED_NAMES = 1
# Seeds the question writes as a name (a capitalised run, keys.name_spans: "Philipsburg", "Green Day") weigh this
# many times their specificity; n-grams of lowercase words that happen to name a node ("the region") weigh 1.
# A common phrase that extraction once made a name ("cast member", "record label", "the writer", "midwest") is
# rare as a node, so by specificity alone it outweighed the names the question spells out and its one passage
# (a basketball season for "midwest") led the top 5. 5 on 50 questions a set, same graphs: dev 2Wiki 99.0 =,
# HotpotQA 89.0 -> 90.0, MuSiQue 75.8 -> 77.5; validation HotpotQA 93.0 =, MuSiQue 79.8 = (3 gains less on
# HotpotQA dev, 4 the same at a lower R@2, 8 loses MuSiQue dev; bench/results/retrieval-experiments.md, 2026-12-05
# evening).
# Scripts without case write no capitalised run: every seed weighs 1, as before. 3 lost HotpotQA dev on 20
# questions with an older extraction (retrieval-issue25.md).
SEED_NAME_BOOST = 5.0
# Name-to-name links in the subgraph: a name is tied to the longer names that contain it as a run of whole words
# ("Hepburn" -> "Audrey Hepburn"), this weight shared among them (0: off), as a reader resolves a short mention.
# Off: 1 lost MuSiQue validation 73.3 -> 71.9 on 40 questions (dev +1.3 / =; bench/results/retrieval-issue25.md).
NAME_LINK = 0.0
# Query-to-fact matching (retrieval/facts.py, HippoRAG 2's recognition step): the relations among the subgraph's
# first passages (up to FACT_MATCH_POOL) embedded as "subject predicate object" and scored against the question;
# the ends of the FACT_MATCH best, at FACT_MATCH_MIN cosine or more, seeded with FACT_MATCH_SHARE of the reset
# mass, each by how far its best fact stands above the pool's mean over the passages naming it (0 facts: off).
# Off: with FACT_MATCH 5 no dev gain at this pool; at pool 64 dev gained (HotpotQA 83.8 -> 86.2, MuSiQue 65.8 ->
# 67.3) and validation lost (92.5 -> 91.2, 73.3 -> 73.1); embedding the facts costs 0.6-1.5 s a query here.
# Again on 20 questions a set (2026-12-04): HotpotQA dev +2.5, MuSiQue dev -1.7, MuSiQue validation -1.6.
FACT_MATCH = 0
FACT_MATCH_POOL = 256
FACT_MATCH_MIN = 0.3
FACT_MATCH_SHARE = 0.3
# 1: only typed relations are facts (a verb between two names), not the co-occurrence links (RELATED_TO): a tenth
# as many to embed.
FACT_MATCH_TYPED = 0
# Synonym edges (retrieval/synonyms.py, HippoRAG 2's synonymy edges around the seeds): each seed is tied to the
# SYNONYM_K names whose entity embeddings lie nearest its own, at SYNONYM_MIN cosine or more, with weight
# SYNONYM_EDGE x cosine (0 names: off). Off: 5 left both dev sets' R@5 equal (MuSiQue validation +1.3).
# Again on 20 questions a set (2026-12-04): MuSiQue dev -0.8, validation +0.9, HotpotQA equal.
SYNONYM_K = 0
SYNONYM_MIN = 0.8
SYNONYM_EDGE = 1.0
# Synonym edges over the whole subgraph (synonyms.subgraph_synonyms), not only around the seeds: each name of the
# subgraph is tied to the SYNONYM_SUBGRAPH_K other names of the subgraph whose stored entity vectors lie nearest
# its own, at SYNONYM_MIN cosine or more, with weight SYNONYM_EDGE x cosine (0: off). Off: 5 lost MuSiQue validation
# (20 questions 78.3 -> 76.7, 50: 73.0 -> 70.7) and costs a vector read of every subgraph name (+100-300 ms p95).
SYNONYM_SUBGRAPH_K = 0
# Dense passage seeds weigh exp((cosine - best cosine) / PPR_PASSAGE_TEMPERATURE), a softmax over the hits (0: by
# raw cosine). The ten hits' cosines sit close together (0.45-0.65 with MiniLM), so by raw cosine the tenth took
# almost as much of the dense share as the first; a softmax gives the retriever's confidence (the embedder was
# trained with a softmax at 0.05; 0.1 is softer). 0.1 won on the dev halves (20 questions a set: HotpotQA 87.5 ->
# 90.0, MuSiQue 70.4 -> 72.9; 50: 85.0 -> 88.0, 69.0 -> 71.8) and lost nowhere on validation (20: 92.5 = 92.5,
# 78.3 = 78.3; 50: 91.0 -> 92.0, 73.0 = 73.0); 0.05 lost MuSiQue validation on 50 (72.3)
# (bench/results/retrieval-experiments.md).
PPR_PASSAGE_TEMPERATURE = 0.1
# A linked name seeds by its specificity 1 / (passages naming it) ** SEED_SPECIFICITY_POWER (1: inverse frequency).
# 0.5 lost on both dev sets (HotpotQA 87.5 -> 85.0) and MuSiQue validation (78.3 -> 77.1) on 20 questions.
SEED_SPECIFICITY_POWER = 1.0
# A linked name's "passages naming it" counts the passages whose text writes it (the chunk full-text index, up to
# SEED_TEXT_FREQUENCY_CAP) when those are more than the passages extraction tied it to: a common word that
# extraction made a name once ("state", "miles", "tony") otherwise seeds as if it were the rarest thing in the
# question, and its one passage outranks the question's real subject (inverse document frequency, as in any text
# index). 1: on (0: extraction's count alone). R@5 on 50 questions, same graphs: dev 2Wiki 97.0 -> 99.0, HotpotQA
# 87.0 = 87.0, MuSiQue 71.8 -> 74.3; validation HotpotQA 92.0 -> 93.0, MuSiQue 72.0 -> 75.7
# (bench/results/retrieval-experiments.md).
SEED_TEXT_FREQUENCY = 1
SEED_TEXT_FREQUENCY_CAP = 1_000
# With SEED_TEXT_FREQUENCY, a disambiguated name ("boots (album)") also counts the passages writing its bare name
# ("boots"): text writes the bare name, never the qualifier (keys.title_keys). 1: on. R@5 on 50 questions: MuSiQue
# dev 74.3 -> 75.3 (one question), every other set equal (bench/results/retrieval-experiments.md).
SEED_TEXT_BARE = 1
# A passage's PPR mass is divided by its weighted degree ** PPR_DEGREE_NORM before ranking: a passage that names
# many things collects mass from everywhere (PageRank's popularity bias), not only from the question (0: off).
# Off: 0.5 lost MuSiQue 70.4 -> 65.0 dev, 78.3 -> 71.2 validation; 0.25 lost MuSiQue validation (72.9).
PPR_DEGREE_NORM = 0.0
# Graph mode's passage order fused with the dense order it started from, by reciprocal rank (RRF_K):
# 1 / (RRF_K + PPR rank) + GRAPH_DENSE_FUSION / (RRF_K + dense rank) (0: the PPR order alone). A question whose
# linked names are only common words ("the race", "May") leans on the walk; the dense retriever's order holds.
# Off: 0.5 and 1 lost HotpotQA validation 92.5 -> 80.0 and MuSiQue dev and validation on 20 questions.
GRAPH_DENSE_FUSION = 0.0
# Full-text passage seeds (graph_mode.text_weights): the PPR_TEXT_SEEDS best BM25 passages of the question join the
# subgraph and take PPR_TEXT_SHARE of the reset mass (the rest keeps its proportions), each by a softmax of its score
# as a share of the best at PPR_PASSAGE_TEMPERATURE (0: off). A question describes a hop in words that are no name
# ("over 60 million casualties", "filling armed forces vacancies"): the walk starts there too, as hybrid search does.
# 0.1 on 50 questions a set, same graphs: dev 2Wiki 99.0 = 99.0, HotpotQA 87.0 -> 89.0, MuSiQue 75.3 -> 75.8;
# validation HotpotQA 93.0 = 93.0, MuSiQue 75.7 -> 79.8 (bench/results/retrieval-experiments.md).
PPR_TEXT_SEEDS = 5
PPR_TEXT_SHARE = 0.1
# The first COVER_POOL passages of the walk are put in order by what they add to the ones before them
# (rank.covering_order): the first stays; each next place goes to the passage of the most walk score x
# exp(COVER_WEIGHT x the share of the question's words, by BM25 idf, that it writes and the chosen ones do not).
# A multi-hop question's passages each answer a part of it; the walk alone fills the top 5 with siblings of the
# first hop (other albums of the same singer, other seasons of the same team) that repeat the part already covered
# (0: off). Off: on 50 questions a set, same graphs, 4 gained dev HotpotQA 89.0 -> 94.0 and MuSiQue 75.8 -> 76.5
# (2Wiki 99.0 =) but lost MuSiQue validation 79.8 -> 79.7 (three questions moved, net -0.1; 2 and 8 lost it too,
# and with SEED_NAME_BOOST 5 as well), and R@2 on 2Wiki (87 -> 85) and MuSiQue validation (62.8 -> 61.5)
# (bench/results/retrieval-experiments.md, 2026-12-05 evening).
COVER_POOL = 10
COVER_WEIGHT = 0.0
FACT_ENTITIES = 40  # graph mode: facts are the relations among this many entities of the most mass


@dataclass(frozen=True)
class Evidence:
    """One evidence item: what chat numbers [n] and research cites."""

    kind: Kind
    text: str
    graph_id: str
    score: float
    origin: Origin
    document_id: str | None = None
    source: str = ""  # file name, or the source title of a text/research document
    url: str | None = None
    page: int | None = None
    chunk_id: str | None = None
    entity_ids: tuple[str, ...] = ()
    # relations and facts: every chunk and document they were extracted from (chunk_id/document_id are the first)
    chunk_ids: tuple[str, ...] = ()
    document_ids: tuple[str, ...] = ()
    triple: tuple[str, str, str] | None = None  # relations and facts: (subject, predicate, object)


@dataclass(frozen=True)
class RetrievalResult:
    """Evidence best first within the character budget, and the World Graph contributors it carries."""

    mode: Mode
    items: list[Evidence]
    contributor_ids: list[int]
    truncated: bool = False  # the budget left out items


@dataclass
class Relation:
    source_id: str
    source: str
    type: str
    target_id: str
    target: str
    strength: int
    chunk_ids: list[str]
    document_ids: list[str]
    contributors: list[int]
    hop: int

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.source, self.type.lower().replace("_", " "), self.target)


@dataclass
class GraphRead:
    """What one graph contributed, before ranking across graphs."""

    graph: Graph
    passages: dict[str, float] = field(default_factory=dict)  # chunk id -> score
    entities: dict[str, float] = field(default_factory=dict)  # entity id -> score
    relations: list[Relation] = field(default_factory=list)
    facts: dict[tuple[str, str, str], float] = field(default_factory=dict)
    fact_relations: dict[tuple[str, str, str], Relation] = field(default_factory=dict)
