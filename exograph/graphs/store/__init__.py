"""The FalkorDB graph store: the only package that speaks Cypher (see core.py for the rules).

core: parameters, labels, relation types, connection, lifecycle; writes: document write/remove,
re-embedding and orphan-vector compaction; reads: search lists, entities, relations, passages; retrieve:
retrieval's passages, entity linking and walk; export: the export's pages.
"""

from __future__ import annotations

from exograph.graphs.store.core import (  # noqa: F401
    DEFAULT_RELATION,
    EF_RUNTIME,
    EMPTY_KEY,
    LABELS,
    MAX_RELATION_CHUNK_IDS,
    MOVING_PREFIX,
    RELATION_TYPE_MAX,
    RESERVED_RELATIONS,
    STORE_DOWN,
    STORE_TIMEOUT,
    WRITE_BATCH,
    StoreMoving,
    StoreUnavailable,
    _ensured,
    chunk_vector_key,
    fulltext_query,
    label,
    moving_marker,
    params,
    primary_reads,
    query,
    relation_type,
    ro_query,
    ro_query_primary,
    store_counts,
    store_document_ids,
    store_drop,
    store_ensure,
    store_terms_backfill,
    store_vector_dimension,
    vector_index_create,
    vector_key,
)
from exograph.graphs.store.export import (  # noqa: F401
    store_export_document_chunks,
    store_export_documents,
    store_export_entities,
    store_export_relations,
)
from exograph.graphs.store.reads import (  # noqa: F401
    store_chunk_places,
    store_document_names,
    store_entities,
    store_entity_find,
    store_entity_passages,
    store_passages,
    store_related,
    store_search_lists,
    store_search_text_lists,
    store_search_vector_lists,
)
from exograph.graphs.store.retrieve import (  # noqa: F401
    bm25_words,
    store_alias_names,
    store_chunk_facts,
    store_chunk_mention_names,
    store_chunk_phrase_counts,
    store_chunk_text_hits,
    store_chunk_text_scored,
    store_chunk_titles,
    store_chunk_vector_hits,
    store_chunks,
    store_entity_degrees,
    store_entity_key_hits,
    store_entity_neighbours,
    store_entity_vectors,
    store_name_chunks,
    store_relations_among,
    store_walk_hop,
)
from exograph.graphs.store.writes import (  # noqa: F401
    store_document_remove,
    store_document_write,
    store_embedding_texts,
    store_entity_contributions,
    store_vector_indexes_wait,
    store_vectors_compact,
    store_vectors_reset,
    store_vectors_write,
)
