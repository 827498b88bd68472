"""Entity and relation extraction behind one interface: `offline` (default, no network) and `llm`.

Both return an `Extraction` over a document's chunks; `extraction_resolve` then merges
entities by normalised name within the document and keeps the other surface forms as aliases.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

from django.conf import settings

from exograph.core.language import language_text, text_is_language
from exograph.documents.extraction.llm import EXTRACTION_SCHEMA, InvalidLLMOutput, LLMExtractor, llm_output_validate
from exograph.documents.extraction.names import extraction_common_terms
from exograph.documents.extraction.ner import ner_read_ahead
from exograph.documents.extraction.offline import OfflineExtractor
from exograph.documents.extraction.resolve import (
    PRUNE_MIN_CHUNKS,
    extraction_from_json,
    extraction_prune,
    extraction_resolve,
    extraction_to_json,
    name_normalise,
)
from exograph.documents.extraction.types import (
    ENTITY_TYPES,
    ChunkLike,
    Entity,
    Extraction,
    Extractor,
    Mention,
    Relation,
)

__all__ = [
    "ENTITY_TYPES",
    "EXTRACTION_SCHEMA",
    "PRUNE_MIN_CHUNKS",
    "ChunkLike",
    "Entity",
    "Extraction",
    "Extractor",
    "InvalidLLMOutput",
    "LLMExtractor",
    "Mention",
    "OfflineExtractor",
    "Relation",
    "document_extract",
    "extraction_chunks",
    "extraction_read_ahead",
    "extraction_warm",
    "extraction_from_json",
    "extraction_prune",
    "extraction_resolve",
    "extraction_to_json",
    "extractor_get",
    "llm_output_validate",
    "name_normalise",
]


def extractor_get(name: str | None = None) -> Extractor:
    """The configured extractor (settings.DOCUMENTS_EXTRACTOR): offline or llm."""
    chosen = name or settings.DOCUMENTS_EXTRACTOR
    if chosen == "llm":
        return LLMExtractor()
    return OfflineExtractor()


@dataclass(frozen=True)
class _LanguageChunk:
    id: str
    text: str


def extraction_chunks(chunks: Sequence[ChunkLike]) -> list[ChunkLike]:
    """The chunks extraction reads: passages that are mostly non-language (figure glyphs, OCR debris, bare grids
    of numbers: core.language) are left out, and runs of glyphs are cut from the others. Ids are kept."""
    kept: list[ChunkLike] = []
    for chunk in chunks:
        if not text_is_language(chunk.text):
            continue
        text = language_text(chunk.text)
        kept.append(chunk if text == chunk.text else _LanguageChunk(id=chunk.id, text=text))
    return kept


def extraction_warm() -> None:
    """Load what the configured extractor reads with now (the offline one's NER model and keyphrase module), so the
    first document a worker extracts does not wait for it: a worker process does this at start, beside the
    embedding model (exograph/celery.py)."""
    if isinstance(extractor_get(), OfflineExtractor):
        OfflineExtractor.warm()


@contextmanager
def extraction_read_ahead(
    documents: Iterable[Sequence[ChunkLike]], *, extractor: Extractor | None = None
) -> Iterator[None]:
    """For the document_extract calls of this thread inside the block, over these documents' chunks: the offline
    extractor's model reads all their language at once (ner.ner_read_ahead), not a document at a time. Each
    document's extraction is the same as without it."""
    chosen = extractor or extractor_get()
    texts = [chunk.text for chunks in documents for chunk in extraction_chunks(chunks)]
    with ner_read_ahead(texts) if isinstance(chosen, OfflineExtractor) else nullcontext():
        yield


def document_extract(chunks: Sequence[ChunkLike], *, extractor: Extractor | None = None) -> Extraction:
    """Extract, resolve (merge by normalised name), judge against the whole document (names.extraction_common_terms:
    a name it also writes in lowercase is a common term...) and prune entities and relations from a document's
    chunks (only their language: extraction_chunks)."""
    texts = extraction_chunks(chunks)
    resolved = extraction_resolve((extractor or extractor_get()).extract(texts))
    resolved = extraction_common_terms(resolved, [chunk.text for chunk in texts])
    return extraction_prune(resolved, chunk_count=len(chunks))
