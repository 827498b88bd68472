"""The LLM extractor: structured extraction through the OpenAI-compatible LLM."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from exograph.core.errors import ExoGraphError, ServiceUnavailable
from exograph.core.llm import LLMPermanentError, llm_chat_complete
from exograph.documents.extraction.offline import OfflineExtractor
from exograph.documents.extraction.resolve import name_normalise
from exograph.documents.extraction.types import (
    ENTITY_TYPES,
    ChunkLike,
    Entity,
    Extraction,
    Extractor,
    Mention,
    Relation,
)

logger = logging.getLogger(__name__)

EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["entities", "relations"],
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "type", "description"],
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string", "enum": list(ENTITY_TYPES)},
                    "description": {"type": "string"},
                },
            },
        },
        "relations": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["source", "target", "type"],
                "properties": {
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "type": {"type": "string"},
                },
            },
        },
    },
}

_SYSTEM_PROMPT = (
    "You extract a knowledge graph from a passage of a document. Return JSON matching the schema: "
    "entities (name as written in the passage, type one of " + ", ".join(ENTITY_TYPES) + ", a one-sentence "
    "description) and relations between those entities (source and target are entity names from your list, "
    "type is a short UPPER_SNAKE_CASE verb such as DEVELOPED or PART_OF). Only use facts stated in the passage."
)


class InvalidLLMOutput(ValueError):
    pass


def llm_output_validate(content: str) -> tuple[list[Entity], list[tuple[str, str, str]]]:
    """Parse and check the model's JSON; raises InvalidLLMOutput on anything off-schema."""
    import json

    try:
        data = json.loads(content)
    except ValueError as exc:
        raise InvalidLLMOutput(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("entities"), list):
        raise InvalidLLMOutput("missing entities list")
    relations_raw = data.get("relations", [])
    if not isinstance(relations_raw, list):
        raise InvalidLLMOutput("relations is not a list")
    entities: list[Entity] = []
    for item in data["entities"]:
        if not isinstance(item, dict):
            raise InvalidLLMOutput("entity is not an object")
        name, kind = item.get("name"), item.get("type")
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            raise InvalidLLMOutput("entity name missing or too long")
        if not isinstance(kind, str) or kind.upper() not in ENTITY_TYPES:
            raise InvalidLLMOutput(f"entity type {kind!r} not allowed")
        description = item.get("description", "")
        entities.append(
            Entity(name=name.strip(), type=kind.upper(), description=str(description)[:500] if description else "")
        )
    names = {name_normalise(e.name) for e in entities}
    relations: list[tuple[str, str, str]] = []
    for item in relations_raw:
        if not isinstance(item, dict):
            raise InvalidLLMOutput("relation is not an object")
        source, target, kind = item.get("source"), item.get("target"), item.get("type")
        if not all(isinstance(v, str) and v.strip() for v in (source, target, kind)):
            raise InvalidLLMOutput("relation fields missing")
        assert isinstance(source, str) and isinstance(target, str) and isinstance(kind, str)  # noqa: S101 - narrowing
        if name_normalise(source) not in names or name_normalise(target) not in names:
            raise InvalidLLMOutput("relation endpoint is not an extracted entity")
        relation_type = re.sub(r"[^A-Z0-9]+", "_", kind.upper()).strip("_")[:60] or "RELATED_TO"
        relations.append((source.strip(), target.strip(), relation_type))
    return entities, relations


class LLMExtractor:
    """Structured extraction through the OpenAI-compatible LLM.

    A transient LLM failure (LLMTransientError: down, 5xx, 429, timeout) propagates, so the pipeline
    task retries the stage with backoff (and fails and refunds the document once retries run out).
    Invalid output is asked again once; a permanent refusal (LLMPermanentError, no LLM configured)
    stops asking. Passages the LLM did not extract go to the offline extractor, and the result
    carries an `llm_extractor_fallback` warning that the document shows its owner."""

    name = "llm"

    def __init__(self, fallback: Extractor | None = None) -> None:
        self.fallback = fallback or OfflineExtractor()

    def extract(self, chunks: Sequence[ChunkLike]) -> Extraction:
        result = Extraction()
        failed: list[ChunkLike] = []
        refusal: ExoGraphError | None = None
        for chunk in chunks:
            parsed = None
            for _attempt in range(0 if refusal else 2):
                try:
                    reply = llm_chat_complete(
                        messages=[
                            {"role": "system", "content": _SYSTEM_PROMPT},
                            {"role": "user", "content": chunk.text},
                        ],
                        json_schema={"name": "knowledge_graph", "schema": EXTRACTION_SCHEMA},
                    )
                    parsed = llm_output_validate(reply.content)
                    break
                except InvalidLLMOutput as exc:
                    logger.info("llm extraction output invalid for chunk %s: %s", chunk.id, exc)
                except (LLMPermanentError, ServiceUnavailable) as exc:
                    logger.warning("llm extraction refused for chunk %s (%s)", chunk.id, exc.code)
                    refusal = exc
                    break
            if parsed is None:
                failed.append(chunk)
                continue
            entities, relations = parsed
            types = {name_normalise(e.name): e.type for e in entities}
            result.entities.extend(entities)
            result.mentions.extend(Mention(chunk.id, e.name, e.type) for e in entities)
            result.relations.extend(
                Relation(s, types[name_normalise(s)], t, types[name_normalise(t)], kind, [chunk.id])
                for s, t, kind in relations
            )
        if failed:
            offline = self.fallback.extract(failed)
            result.entities.extend(offline.entities)
            result.mentions.extend(offline.mentions)
            result.relations.extend(offline.relations)
            why = refusal.message if refusal else "its output was not valid JSON for the schema"
            result.warnings.append(
                {
                    "code": "llm_extractor_fallback",
                    "message": f"The LLM extractor did not extract {len(failed)} of {len(chunks)} passages ({why}); "
                    "the offline extractor was used for them.",
                }
            )
        return result
