"""Graph mode: the bounded passage/name subgraph pulled from FalkorDB and ranked by Personalized PageRank."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from exograph.graphs import store
from exograph.graphs.embeddings import Embedder
from exograph.graphs.retrieval.facts import fact_seeds
from exograph.graphs.retrieval.keys import name_spans, question_keys, title_keys
from exograph.graphs.retrieval.paths import relation_from_row, search_pool
from exograph.graphs.retrieval.rank import covering_order, damp_same_source, personalized_pagerank
from exograph.graphs.retrieval.subgraph_index import SubgraphReads, alias_names, subgraph_reads
from exograph.graphs.retrieval.synonyms import subgraph_synonyms, synonym_names
from exograph.graphs.retrieval.types import (
    ALIAS_NAMES,
    COVER_POOL,
    COVER_WEIGHT,
    ENTITY_VECTOR_MIN,
    ENTITY_VECTOR_NAMES,
    ENTITY_VECTOR_SHARE,
    FACT_ENTITIES,
    FACT_MATCH,
    FACT_MATCH_SHARE,
    GRAPH_DENSE_FUSION,
    MAX_NGRAM,
    MAX_RING_NAMES,
    NAME_LINK,
    PER_ENTITY_CHUNKS,
    PPR_DAMPING,
    PPR_DEGREE_NORM,
    PPR_PASSAGE_SEEDS,
    PPR_PASSAGE_SHARE,
    PPR_PASSAGE_TEMPERATURE,
    PPR_TEXT_SEEDS,
    PPR_TEXT_SHARE,
    PPR_TITLE_LINK,
    SEED_NAME_BOOST,
    SEED_NESTED_NAMES,
    SEED_SPECIFICITY_POWER,
    SEED_TEXT_BARE,
    SEED_TEXT_FREQUENCY,
    SEED_TEXT_FREQUENCY_CAP,
    SYNONYM_EDGE,
    SYNONYM_K,
    SYNONYM_SUBGRAPH_K,
    WALK_CAP,
    GraphRead,
)
from exograph.graphs.selectors.search import RRF_K, VECTOR_OVERFETCH
from exograph.graphs.store.core import STOPWORDS
from exograph.graphs.types import normalize_name

_WORDS = re.compile(r"[^\W_]+")
_title_keys = functools.lru_cache(maxsize=65_536)(lambda title: tuple(title_keys(title)))  # a pure function of title


def graph_rank(
    *,
    read: GraphRead,
    question: str,
    dense: list[tuple[str, float]] | None = None,
    vector: list[float] | None = None,
    embedder: Embedder | None = None,
) -> None:
    """Mode graph for one graph (HippoRAG-style): link the names the question spells out to entity names, pull
    the bounded subgraph of passages and names around them and around the top dense passages, rank it by
    Personalized PageRank and fill read.passages / entities / facts.

    Nodes are passages and entity *names* (same-named entities of different types are one node); a passage is
    tied to each name it mentions (by extraction, or by writing it: name_spans) with weight 1/log(2 + number of
    passages naming it), so a rare name binds strongly. The reset mass goes to the linked names, each by its
    specificity (1/passages naming it: tied to it by extraction or writing it, whichever are more; SEED_NAME_BOOST
    times that for a name the question writes capitalised, so a lowercase phrase that extraction once made a node
    does not outweigh it), a share
    to the dense hits by similarity, and PPR_TEXT_SHARE to the question's best full-text (BM25) passages, which join
    the subgraph: a hop the question describes in words that are no name is reached without a name leading there. With `vector` (the question's embedding) and ENTITY_VECTOR_NAMES, the names
    whose entity embeddings lie nearest the question take a share too (vector_names): a question that describes
    a thing in other words than its name still seeds it. With `embedder` too and FACT_MATCH, the ends of the
    subgraph's relations whose text best matches the question take FACT_MATCH_SHARE (facts.fact_seeds): a
    question that describes the link seeds the names it joins. With COVER_WEIGHT, the first COVER_POOL passages are
    put in order by the question's words each adds to those before it (rank.covering_order)."""
    store_name = read.graph.store_name
    pending_dense = (  # the top dense passages, read beside the names (None: none given and no vector)
        search_pool().submit(
            store.store_chunk_vector_hits,
            store_name,
            vector=vector,
            k=PPR_PASSAGE_SEEDS,
            vector_k=PPR_PASSAGE_SEEDS + VECTOR_OVERFETCH,
        )
        if dense is None and vector is not None
        else None
    )
    pending_similar = (
        search_pool().submit(vector_names, store_name, vector) if vector is not None and ENTITY_VECTOR_NAMES else None
    )
    # Keys of function words alone ("who", "where was") would link the question to titles like "Where Was I".
    keys = [k for k in question_keys(question) if not all(w in STOPWORDS for w in re.findall(r"\w+", k))]
    reads = subgraph_reads(store_name)
    text_seeded = PPR_TEXT_SHARE > 0 and PPR_TEXT_SEEDS > 0
    pending_text = (  # the top full-text (BM25) passages and the question words' idf, read beside the names
        search_pool().submit(
            store.store_chunk_text_scored,
            store_name,
            text_query=store.fulltext_query(question),
            k=PPR_TEXT_SEEDS if text_seeded else 0,
            chunk_words=reads.words(),  # their words from the index
        )
        if text_seeded or COVER_WEIGHT > 0
        else None
    )
    found = alias_names(reads, store_name, keys, limit=MAX_NGRAM * 4, per_key=ALIAS_NAMES)
    similar = pending_similar.result() if pending_similar is not None else {}
    names = reads.name_chunks(
        [*keys, *(n for linked in found.values() for n in linked), *similar], per_name=PER_ENTITY_CHUNKS
    )
    # A key that is a name links to that name alone ("Paris" is the city, not "Paris (film)", whose alias it is);
    # a key that is only an alias links to every name that has it, up to ALIAS_NAMES ("III" -> each album titled
    # "III (...)"), and PPR sorts out which one the question means.
    if not SEED_NESTED_NAMES:
        keys = outermost_keys([k for k in keys if k in names or found.get(k)])
    aliases = [name for key, linked in found.items() if key in keys and key not in names for name in linked]
    seeds = [k for k in dict.fromkeys([*keys, *aliases]) if k in names]
    similar = {k: score for k, score in similar.items() if k in names}
    pending_written = (  # how many passages write each seed, read beside the ring
        search_pool().submit(
            store.store_chunk_phrase_counts,
            store_name,
            [key for seed in seeds for key in (_title_keys(seed) if SEED_TEXT_BARE else (seed,))],
            cap=SEED_TEXT_FREQUENCY_CAP,
        )
        if SEED_TEXT_FREQUENCY and seeds
        else None
    )
    synonyms = synonym_names(store_name, {k: names[k][2] for k in seeds}) if SYNONYM_K else []
    if synonyms:  # the synonyms' own passages join the subgraph, as the seeds' do
        fresh = [o for _, o, _ in synonyms if o not in names]
        names.update(reads.name_chunks(fresh, per_name=PER_ENTITY_CHUNKS))
    if pending_dense is not None:
        dense = pending_dense.result()
    dense_hits = (dense or [])[:PPR_PASSAGE_SEEDS]
    text_hits, term_idf = pending_text.result() if pending_text is not None else ([], {})
    ring = list(
        dict.fromkeys(
            [
                *(c for c, _ in dense_hits),
                *(c for c, _ in text_hits),
                *(c for k in [*seeds, *similar] for c in names[k][0]),
            ]
        )
    )
    pending_texts = search_pool().submit(reads.chunks, ring)  # overlaps the mentions read
    pending_facts = (
        search_pool().submit(fact_seeds, store_name, chunk_ids=ring, vector=vector, embedder=embedder)
        if vector is not None and embedder is not None and FACT_MATCH
        else None
    )
    mentions = reads.mention_names(ring)
    texts = pending_texts.result()
    written = {cid: reads.spans(cid, texts[cid]["text"]) for cid in ring if cid in texts}
    wanted = [k for _, k in mentions] + [k for spans in written.values() for k in spans]
    names.update(
        reads.name_chunks(
            [k for k in dict.fromkeys(wanted) if k not in names][:MAX_RING_NAMES], per_name=PER_ENTITY_CHUNKS
        )
    )
    pairs: set[tuple[str, str]] = set(mentions)
    pairs.update((cid, k) for cid, spans in written.items() for k in spans if k in names)
    for key, (cids, _total, _eids) in names.items():  # the seeds' passages and the ring names' passages
        pairs.update((cid, key) for cid in cids)
    frequency = {key: max(1, total) for key, (_cids, total, _eids) in names.items()}
    for _, key in pairs:
        frequency.setdefault(key, 1)
    matched = pending_facts.result() if pending_facts is not None else {}
    matched = {key: score for key, score in matched.items() if key in frequency}  # a node of the subgraph
    nodes: dict[str, int] = {}

    def node(key: str) -> int:
        return nodes.setdefault(key, len(nodes))

    edges = [(node("c:" + cid), node("n:" + key), 1.0 / math.log(2.0 + frequency[key])) for cid, key in sorted(pairs)]
    # A passage that names a document's title is tied to that document's passages directly (HippoRAG's
    # passage-to-passage links): "directed by James Fargo" leads one step to the passage titled "James Fargo".
    titles = {cid: (row["document_id"], row["title"]) for cid, row in texts.items()}  # the ring's, read above
    titles.update(reads.titles(sorted({cid for cid, _ in pairs} - set(titles))))
    titled: dict[str, list[str]] = {}
    for cid, (_document_id, title) in titles.items():
        for title_key in _title_keys(title):
            titled.setdefault(title_key, []).append(cid)
    for cid, key in sorted(pairs):
        document_id = titles.get(cid, ("", ""))[0]
        targets = [other for other in titled.get(key, ()) if titles[other][0] != document_id]
        for other in targets:
            edges.append((node("c:" + cid), node("c:" + other), PPR_TITLE_LINK / len(targets)))
    edges.extend(
        (node("n:" + key), node("n:" + other), SYNONYM_EDGE * similarity)
        for key, other, similarity in synonyms
        if other in names
    )
    if NAME_LINK > 0:
        edges.extend(name_links([key[2:] for key in nodes if key.startswith("n:")], node))
    if SYNONYM_SUBGRAPH_K > 0:
        linked = {key[2:]: names[key[2:]][2] for key in nodes if key.startswith("n:") and key[2:] in names}
        edges.extend(
            (node("n:" + key), node("n:" + other), SYNONYM_EDGE * similarity)
            for key, other, similarity in subgraph_synonyms(store_name, linked)
        )
    for cid, _ in [*dense_hits, *text_hits]:
        node("c:" + cid)
    reset = np.zeros(len(nodes))
    written_names = set(name_spans(question)) if SEED_NAME_BOOST != 1.0 else set()
    seed_frequency = {k: frequency[k] for k in seeds}
    if pending_written is not None:  # a name the text writes more often than extraction tied it is that common
        writing = pending_written.result()
        seed_frequency = {
            k: max(f, *(writing.get(key, 0) for key in (_title_keys(k) if SEED_TEXT_BARE else (k,))))
            for k, f in seed_frequency.items()
        }
    specificity = {
        k: (SEED_NAME_BOOST if k in written_names else 1.0) / seed_frequency[k] ** SEED_SPECIFICITY_POWER for k in seeds
    }
    entity_mass = sum(specificity.values()) or 1.0
    dense_weight = passage_weights(dense_hits)
    passage_mass = sum(dense_weight.values()) or 1.0
    passage_share = PPR_PASSAGE_SHARE if seeds or matched else 1.0
    similar_share = ENTITY_VECTOR_SHARE if similar else 0.0
    fact_share = FACT_MATCH_SHARE if matched else 0.0
    if not seeds:  # the facts take what the linked names would have
        fact_share = 1.0 - passage_share - similar_share if matched else 0.0
    for key in seeds:
        reset[node("n:" + key)] += (1.0 - passage_share - similar_share - fact_share) * specificity[key] / entity_mass
    fact_weight = {key: score / frequency[key] for key, score in matched.items()}
    fact_mass = sum(fact_weight.values()) or 1.0
    for key, weight in fact_weight.items():
        reset[node("n:" + key)] += fact_share * weight / fact_mass
    for cid, weight in dense_weight.items():
        reset[nodes["c:" + cid]] += passage_share * weight / passage_mass
    similar_weight = {k: score / frequency[k] for k, score in similar.items()}
    similar_mass = sum(similar_weight.values()) or 1.0
    for key, weight in similar_weight.items():
        reset[node("n:" + key)] += similar_share * weight / similar_mass
    if text_hits:  # the full-text hits take PPR_TEXT_SHARE, the rest keeps its proportions
        reset *= 1.0 - PPR_TEXT_SHARE
        text_weight = text_weights(text_hits)
        text_mass = sum(text_weight.values()) or 1.0
        for cid, weight in text_weight.items():
            reset[nodes["c:" + cid]] += PPR_TEXT_SHARE * weight / text_mass
    rank = personalized_pagerank(len(nodes), edges, reset, damping=PPR_DAMPING)
    passage_rank = degree_normalised(rank, edges, power=PPR_DEGREE_NORM) if PPR_DEGREE_NORM > 0 else rank
    for key, index in nodes.items():
        mass = float(rank[index])
        if mass <= 0:
            continue
        if key.startswith("c:"):
            read.passages[key[2:]] = float(passage_rank[index])
        else:
            for eid in names.get(key[2:], ([], 0, []))[2]:
                read.entities[eid] = max(read.entities.get(eid, 0.0), mass)
    read.passages = damp_same_source(read.passages, titles)
    if GRAPH_DENSE_FUSION > 0:
        read.passages = dense_fused(read.passages, [cid for cid, _ in dense_hits], weight=GRAPH_DENSE_FUSION)
    if COVER_WEIGHT > 0 and term_idf and read.passages:
        head = sorted(read.passages, key=lambda cid: (-read.passages[cid], cid))[:COVER_POOL]
        read.passages = covering_order(
            read.passages, passage_words(reads, head, texts), term_idf, pool=COVER_POOL, weight=COVER_WEIGHT
        )
    # Facts: the relations between the entities that carry the most mass (the weaker end bounds a fact's mass),
    # one read instead of a walk: what PPR reached is what the facts may join.
    heavy = sorted(read.entities, key=lambda eid: (-read.entities[eid], eid))[:FACT_ENTITIES]
    relations = [
        relation_from_row(row, hop=1) for row in store.store_relations_among(store_name, ids=heavy, limit=WALK_CAP)
    ]
    for relation in relations:
        mass = min(read.entities.get(relation.source_id, 0.0), read.entities.get(relation.target_id, 0.0))
        triple = relation.triple
        if mass > read.facts.get(triple, 0.0):
            read.facts[triple] = mass
            read.fact_relations[triple] = relation


def passage_words(
    reads: SubgraphReads, chunk_ids: list[str], texts: dict[str, dict[str, Any]]
) -> dict[str, tuple[str, ...]]:
    """Each passage's BM25 words (store.bm25_words): from the in-memory index, else from the texts already read
    (the ring's), else read now."""
    held = reads.words()
    words = held(chunk_ids) if held is not None else {}
    missing = [cid for cid in chunk_ids if cid not in words]
    rows = {cid: texts[cid] for cid in missing if cid in texts}
    rows.update(reads.chunks([cid for cid in missing if cid not in rows]) if len(rows) < len(missing) else {})
    words.update({cid: store.bm25_words(row.get("text") or "") for cid, row in rows.items()})
    return words


def passage_weights(hits: list[tuple[str, float]]) -> dict[str, float]:
    """Reset weight of each dense hit (chunk id -> weight): its cosine, or with PPR_PASSAGE_TEMPERATURE > 0
    exp((cosine - best) / temperature), so the best hit weighs 1 and one far below it next to nothing."""
    if not hits:
        return {}
    if PPR_PASSAGE_TEMPERATURE <= 0:
        return {cid: max(score, 0.0) for cid, score in hits}
    best = max(score for _, score in hits)
    return {cid: math.exp((score - best) / PPR_PASSAGE_TEMPERATURE) for cid, score in hits}


def text_weights(hits: list[tuple[str, float]]) -> dict[str, float]:
    """Reset weight of each full-text hit (chunk id -> weight): passage_weights over the BM25 scores as a share of
    the best (BM25 has no fixed scale), so the best hit weighs 1."""
    best = max((score for _, score in hits), default=0.0)
    return passage_weights([(cid, score / best) for cid, score in hits if score > 0]) if best > 0 else {}


def dense_fused(scores: dict[str, float], dense: list[str], *, weight: float) -> dict[str, float]:
    """Passage scores as the reciprocal-rank fusion of their order (by score) and the dense order, the dense list
    weighing `weight`; a dense hit PPR did not score still counts by its dense rank."""
    fused = {cid: 1.0 / (RRF_K + rank) for rank, cid in enumerate(sorted(scores, key=lambda c: (-scores[c], c)), 1)}
    for rank, cid in enumerate(dict.fromkeys(dense), 1):
        fused[cid] = fused.get(cid, 0.0) + weight / (RRF_K + rank)
    return fused


def degree_normalised(rank: np.ndarray, edges: list[tuple[int, int, float]], *, power: float) -> np.ndarray:
    """rank divided by each node's weighted degree (both directions: the walk is undirected) ** power; a node
    without edges keeps its mass."""
    degree = np.zeros(len(rank))
    if edges:
        ends = np.array([(a, b) for a, b, _ in edges], dtype=np.int64)
        weights = np.array([w for _, _, w in edges], dtype=np.float64)
        degree += np.bincount(ends[:, 0], weights=weights, minlength=len(rank))
        degree += np.bincount(ends[:, 1], weights=weights, minlength=len(rank))
    scale = np.where(degree > 0, np.power(np.maximum(degree, 1e-12), power), 1.0)
    return np.asarray(rank / scale)


def name_links(keys: list[str], node: Callable[[str], int]) -> list[tuple[int, int, float]]:
    """Edges from each name to the longer names of the subgraph that contain it as a run of whole words
    ("hepburn" -> "audrey hepburn"), NAME_LINK shared among them; a run of stopwords alone links nothing."""
    present = set(keys)
    longer: dict[str, list[str]] = {}
    for key in keys:
        words = _WORDS.findall(key)
        if len(words) < 2:
            continue
        for n in range(1, len(words)):
            for start in range(len(words) - n + 1):
                run = words[start : start + n]
                short = " ".join(run)
                if short in present and short != key and not all(w in STOPWORDS for w in run):
                    longer.setdefault(short, []).append(key)
    edges: list[tuple[int, int, float]] = []
    for short, targets in longer.items():
        for target in dict.fromkeys(targets):
            edges.append((node("n:" + short), node("n:" + target), NAME_LINK / len(targets)))
    return edges


def vector_names(store_name: str, vector: list[float], *, k: int | None = None) -> dict[str, float]:
    """Normalised name -> cosine similarity of the k (default ENTITY_VECTOR_NAMES) entities whose embeddings (name
    and description) lie nearest the question, those at ENTITY_VECTOR_MIN or above (the query-to-entity match of
    HippoRAG's linking, beside the exact names the question spells out)."""
    lists = store.store_search_vector_lists(
        store_name,
        vector=vector,
        k=k or ENTITY_VECTOR_NAMES,
        vector_k=(k or ENTITY_VECTOR_NAMES) + VECTOR_OVERFETCH,
        chunks=False,
    )
    hits = [(eid, 1.0 + score) for eid, score, _ in lists.get("entity_vector", []) if 1.0 + score >= ENTITY_VECTOR_MIN]
    rows = store.store_entities(store_name, [eid for eid, _ in hits])
    found: dict[str, float] = {}
    for eid, similarity in hits:
        if eid in rows and (key := normalize_name(rows[eid]["name"])):
            found[key] = max(found.get(key, 0.0), similarity)
    return found


def outermost_keys(keys: list[str]) -> list[str]:
    """The linked keys not inside a longer linked key, in their order ("walker texas ranger" keeps "texas" out):
    one mention of the question links once, by its longest name, as a mention tagger would cut it."""
    words = {key: " " + " ".join(_WORDS.findall(key)) + " " for key in keys}
    kept: list[str] = []
    for key in sorted(keys, key=lambda k: -len(words[k])):
        if not any(words[key] in words[longer] for longer in kept):
            kept.append(key)
    return [key for key in keys if key in kept]
