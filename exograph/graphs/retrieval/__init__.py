"""Retrieve: the one pure read shared by search, chat and research (see DESIGN.md "Flows: Retrieve").

No writes, no Celery, no earnings: `retrieve` returns the ids of the accounts whose World Graph
knowledge is in the evidence, and the caller records them with billing's `earnings_record`.

Search paths (each usable alone, fused by reciprocal rank): passages by vector and full text
directly over chunks; entities by exact name/alias (question n-grams against the indexed
normalised names), fuzzy full text and vectors; a walk from the entities found over typed relation
edges only, capped per hop (each hop gets its share) and preferring relations between hits.

Mode `graph` ranks like HippoRAG: a bounded subgraph (passages and entity names as nodes, a passage tied
to each name it mentions or writes, weighted by the name's specificity) is pulled from FalkorDB and ranked
in Python by Personalized PageRank (scipy sparse), seeded by the names the question spells out plus a
share of the top dense passage hits. Passages rank by PPR mass; the relations between entities that carry
mass become facts, and the top entities evidence. Ranking in Python over a pulled subgraph is the measured
choice: the subgraph read is a handful of indexed queries and the PPR itself takes ~1-5 ms, where FalkorDB's
own PageRank runs over a whole label set and takes no personalisation vector.

Layout: `types` (evidence, tunables), `checks` (input), `keys` (question parsing), `rank` (RRF, PPR, damping),
`paths` (the search paths over one graph), `graph_mode` (the PPR subgraph), `subgraph_index` (what the subgraph is
read from: a small graph's mention table held per process until its next write), `assemble` (evidence within the
budget), `retrieve` (the flow), `entity_search` (search_entities).
"""

from exograph.graphs.retrieval.entity_search import EntitySearch, entity_search
from exograph.graphs.retrieval.keys import name_spans, question_keys, title_keys
from exograph.graphs.retrieval.paths import entities_link, graph_walk, passages_search
from exograph.graphs.retrieval.rank import personalized_pagerank, rrf
from exograph.graphs.retrieval.retrieve import retrieve, retrieve_for_user
from exograph.graphs.retrieval.types import MODES, Evidence, Kind, Mode, Origin, RetrievalResult

__all__ = [
    "MODES",
    "EntitySearch",
    "Evidence",
    "Kind",
    "Mode",
    "Origin",
    "RetrievalResult",
    "entities_link",
    "entity_search",
    "graph_walk",
    "name_spans",
    "passages_search",
    "personalized_pagerank",
    "question_keys",
    "retrieve",
    "retrieve_for_user",
    "rrf",
    "title_keys",
]
