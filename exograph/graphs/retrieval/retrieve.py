"""The Retrieve flow: the one pure read shared by search, chat and research."""

from __future__ import annotations

from collections.abc import Sequence

from exograph.accounts.models import User
from exograph.core.scope import Scope
from exograph.graphs import store
from exograph.graphs.models import Graph
from exograph.graphs.retrieval.assemble import assemble
from exograph.graphs.retrieval.checks import check_graphs, check_int, check_mode
from exograph.graphs.retrieval.graph_mode import graph_rank
from exograph.graphs.retrieval.paths import entities_link, graph_walk, passages_search
from exograph.graphs.retrieval.rank import top
from exograph.graphs.retrieval.types import (
    DEFAULT_BUDGET,
    MAX_BUDGET,
    MAX_HOPS,
    MAX_TOP_K,
    MIN_BUDGET,
    GraphRead,
    RetrievalResult,
)
from exograph.graphs.selectors import embedder_check
from exograph.graphs.selectors.search import _check_query, search_graphs_for_user

# --- the Retrieve flow -------------------------------------------------------------------------


def retrieve(
    *,
    actor: User,
    graphs: Sequence[Graph],
    question: str,
    mode: str = "hybrid",
    top_k: int = 10,
    hops: int = 2,
    budget: int = DEFAULT_BUDGET,
) -> RetrievalResult:
    """Evidence for question from graphs (each must be readable by actor), best first within budget
    characters. Pure read: the caller records result.contributor_ids with billing.

    Raises ValidationError (empty/too long question, mode, top_k 1..100, hops 1..3, budget),
    NotFound (a graph actor may not read), Conflict (graph built with another embedder), ServiceUnavailable."""
    text = _check_query(question)
    checked_mode = check_mode(mode)
    top_k = check_int(top_k, name="top_k", low=1, high=MAX_TOP_K)
    hops = check_int(hops, name="hops", low=1, high=MAX_HOPS)
    budget = check_int(budget, name="budget", low=MIN_BUDGET, high=MAX_BUDGET)
    readable = check_graphs(actor=actor, graphs=graphs)
    if not readable:
        return RetrievalResult(mode=checked_mode, items=[], contributor_ids=[])
    embedder = [embedder_check(graph=graph) for graph in readable][0]
    vector = [float(x) for x in embedder.embed_one(text)]
    text_query = store.fulltext_query(text)
    k = min(MAX_TOP_K, max(20, top_k * 2))
    reads: list[GraphRead] = []
    for graph in readable:
        read = GraphRead(graph=graph)
        if checked_mode == "graph":
            # PPR decides how far it reaches; hops bound hybrid's walk. It reads the top dense passages itself.
            graph_rank(read=read, question=text, vector=vector, embedder=embedder)
        else:
            read.passages = passages_search(graph=graph, text_query=text_query, vector=vector, k=k)
            if checked_mode == "hybrid":
                read.entities = entities_link(graph=graph, question=text, text_query=text_query, vector=vector, k=k)
                seeds = top(read.entities, top_k)
                read.relations = graph_walk(graph=graph, seeds=seeds, hops=hops) if seeds else []
        reads.append(read)
    return assemble(actor=actor, reads=reads, mode=checked_mode, question=text, top_k=top_k, budget=budget)


def retrieve_for_user(
    *,
    actor: User,
    question: str,
    scope: Scope,
    graph_id: str | None = None,
    mode: str = "hybrid",
    top_k: int = 10,
    hops: int = 2,
    budget: int = DEFAULT_BUDGET,
) -> RetrievalResult:
    """retrieve over the graphs a search of scope (or the one graph_id) reads, by the selectors' scope rules."""
    graphs = search_graphs_for_user(user=actor, scope=Scope(scope), graph_id=graph_id)
    return retrieve(actor=actor, graphs=graphs, question=question, mode=mode, top_k=top_k, hops=hops, budget=budget)
