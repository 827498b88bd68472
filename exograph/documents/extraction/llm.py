"""The LLM extractor: structured extraction through the OpenAI-compatible LLM."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

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

EntityType = Literal[ENTITY_TYPES]  # type: ignore[valid-type]


def _strict_object(schema: dict[str, Any]) -> None:
    """Strict structured output wants every property required (a default only helps validation) and no other
    properties; a reply from a server that does not enforce the schema may still carry extra keys, which
    validation ignores as the hand-written validator did."""
    schema["required"] = list(schema.get("properties", {}))
    schema["additionalProperties"] = False


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True, json_schema_extra=_strict_object)


class ExtractedEntity(_Strict):
    name: str = Field(min_length=1, max_length=200)
    type: EntityType
    description: str = ""

    @field_validator("type", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("description", mode="before")
    @classmethod
    def _short(cls, value: object) -> object:
        return str(value)[:500] if value else ""


class ExtractedRelation(_Strict):
    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    type: str = Field(min_length=1)


class KnowledgeGraphOut(_Strict):
    """What the model returns for a passage; relation endpoints must be entities of the same reply."""

    entities: list[ExtractedEntity]
    relations: list[ExtractedRelation] = []

    @model_validator(mode="after")
    def _endpoints_are_entities(self) -> KnowledgeGraphOut:
        names = {name_normalise(e.name) for e in self.entities}
        for relation in self.relations:
            if name_normalise(relation.source) not in names or name_normalise(relation.target) not in names:
                raise ValueError("relation endpoint is not an extracted entity")
        return self


# Keywords strict structured output does not take (length bounds, defaults, titles) are left out of what is sent;
# validation still applies them.
_NOT_SENT = frozenset({"default", "maxLength", "minLength", "title"})


def _sendable(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _sendable(v) for k, v in node.items() if not (k in _NOT_SENT and not isinstance(v, dict))}
    if isinstance(node, list):
        return [_sendable(v) for v in node]
    return node


EXTRACTION_SCHEMA: dict[str, Any] = _sendable(KnowledgeGraphOut.model_json_schema())

_SYSTEM_PROMPT = (
    "You extract a knowledge graph from a passage of a document. Return JSON matching the schema: "
    "entities (name as written in the passage, type one of " + ", ".join(ENTITY_TYPES) + ", a one-sentence "
    "description) and relations between those entities (source and target are entity names from your list, "
    "type is a short UPPER_SNAKE_CASE verb such as DEVELOPED or PART_OF). Only use facts stated in the passage."
)


class InvalidLLMOutput(ValueError):
    pass


def llm_output_validate(content: str) -> tuple[list[Entity], list[tuple[str, str, str]]]:
    """Parse and check the model's JSON against KnowledgeGraphOut; raises InvalidLLMOutput on anything off-schema."""
    try:
        data = KnowledgeGraphOut.model_validate_json(content)
    except PydanticValidationError as exc:
        raise InvalidLLMOutput(f"{exc.error_count()} schema errors, first: {exc.errors()[0]['msg']}") from exc
    entities = [Entity(name=e.name, type=e.type, description=e.description) for e in data.entities]
    relations = [
        (r.source, r.target, re.sub(r"[^A-Z0-9]+", "_", r.type.upper()).strip("_")[:60] or "RELATED_TO")
        for r in data.relations
    ]
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
