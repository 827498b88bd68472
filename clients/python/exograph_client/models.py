"""Typed models of the ExoGraph REST answers (the shapes of /api/v1/schema/). Unknown fields are kept (extra="allow"),
so a newer server's additions never break an older client."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


# --- graphs ----------------------------------------------------------------------------------------


class GraphCounts(Model):
    entities: int = 0
    relations: int = 0
    documents: int = 0


class Graph(Model):
    id: str
    name: str
    scope: str
    type: str
    created: str
    counts: GraphCounts = Field(default_factory=GraphCounts)
    owned: bool = False
    embedding_model: str = ""
    embedding_dim: int | None = None


# --- documents -------------------------------------------------------------------------------------

TERMINAL_DOCUMENT_STATUSES = frozenset({"processed", "failed", "cancelled", "unchanged"})


class DocumentFailure(Model):
    stage: str = ""
    reason: str = ""


class DocumentWarning(Model):
    code: str = ""
    message: str = ""


class DocumentSummary(Model):
    """A row of GET /documents/."""

    id: str
    filename: str = ""
    title: str = ""
    pages: int = 0
    created: str = ""
    scope: str = ""
    status: str
    progress: int = 0
    graph_id: str = ""


class Document(DocumentSummary):
    """GET /documents/{id}/; an upload's answer adds credits_charged and balance."""

    content_type: str = ""
    source_url: str = ""
    source_type: str = ""
    published: str | None = None
    size: int = 0
    pages_estimated: bool = False
    text_engine: str = ""
    ocr_pages: int = 0
    stage: str = ""
    failure: DocumentFailure | None = None
    chunk_count: int = 0
    entity_count: int = 0
    relation_count: int = 0
    processed_at: str | None = None
    warnings: list[DocumentWarning] = Field(default_factory=list)
    credits_charged: int | None = None
    refunded: bool = False
    balance: int | None = None

    @property
    def done(self) -> bool:
        return self.status in TERMINAL_DOCUMENT_STATUSES

    @property
    def credits_refunded(self) -> int:
        """What came back of the upload's charge: all of it once refunded (cancelled, or failed), else 0."""
        return (self.credits_charged or 0) if self.refunded else 0


class Quote(Model):
    """A dry run's answer: the price, nothing charged."""

    dry_run: bool = True
    credits_needed: int
    balance: int
    covered: bool
    refusal: dict[str, Any] | None = None


class UploadQuote(Quote):
    """An upload's dry run (documents.quote): the price of the file or text and where it would go."""

    filename: str = ""
    pages: int = 0
    pages_estimated: bool = False
    scope: str = ""
    graph_id: str = ""
    duplicate_of: str | None = None


class ImportQuote(Quote):
    """An import's dry run (graphs.quote_import): every row validated, nothing written."""

    graph_id: str = ""
    format: str = ""
    rows: int = 0
    triples: int = 0
    entity_records: int = 0


class ResearchQuote(Quote):
    """A research session's dry run (research.quote): the budget it would hold."""

    model: str = ""


class ImportResult(Model):
    """What an import wrote: rows (triples and entity records), the entities it names and how many of them the
    graph already held, the sources written (one document each) and the charge."""

    graph_id: str
    format: str
    rows: int
    triples: int
    entity_records: int = 0
    entities: int = 0
    entities_joined: int = 0
    documents_written: int = 0
    documents_unchanged: int = 0
    credits_charged: int = 0
    balance: int = 0


# --- search, evidence ------------------------------------------------------------------------------


class EntityHit(Model):
    id: str
    name: str
    type: str
    graph_id: str
    graph_name: str = ""
    relevance: float
    context: str = ""


class SearchResult(Model):
    query: str
    count: int
    results: list[EntityHit]


class RelationEvidence(Model):
    """A passage behind a World Graph relation (asked for with evidence=True)."""

    document: str = ""
    page: int | None = None
    text: str = ""
    view_url: str | None = None


class RelatedEntity(Model):
    """An entity related to a World Graph entity: the relation, its direction and how well it is supported."""

    id: str
    name: str
    type: str = ""
    relationship: str = ""
    direction: str = ""
    strength: int = 0
    sources: list[str] = Field(default_factory=list)
    evidence: list[RelationEvidence] = Field(default_factory=list)


class Entity(Model):
    """An entity of the World Graph (GET /world/entities/{entity}/) with its related entities."""

    id: str
    name: str
    type: str
    description: str = ""
    aliases: list[str] = Field(default_factory=list)
    mentions: int = 0
    graph_id: str = ""
    related: list[RelatedEntity] = Field(default_factory=list)


class Evidence(Model):
    """One item a chat answer considered or cites: a passage, fact, relation or entity with its provenance."""

    n: int
    kind: str
    origin: str = ""
    text: str
    graph_id: str = ""
    document_id: str | None = None
    source: str = ""
    url: str | None = None
    page: int | None = None
    chunk_id: str | None = None
    view_url: str | None = None
    cited: bool | None = None


class Retrieval(Model):
    """Evidence without an answer (POST /retrieve/): items best first, numbered 1..count."""

    mode: str
    count: int
    items: list[Evidence]


# --- chat ------------------------------------------------------------------------------------------


class Citations(Model):
    grounded: bool = False
    support_score: float = 0.0
    cited: list[int] = Field(default_factory=list)
    invalid: list[int] = Field(default_factory=list)
    uncited: list[str] = Field(default_factory=list)
    unsupported: list[dict[str, Any]] = Field(default_factory=list)


class ChatAnswer(Model):
    session_id: str
    message_id: str
    title: str = ""
    answer: str
    model: str = ""
    reasoning_engine: str = ""
    graph_scope: str = ""
    graph_id: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    considered: list[Evidence] = Field(default_factory=list)
    answered: bool = False
    short_answer: str = ""
    grounded: bool = False
    support_score: float = 0.0
    citations: Citations = Field(default_factory=Citations)
    usage: dict[str, Any] = Field(default_factory=dict)
    credits_charged: int = 0
    balance: int = 0


# --- research --------------------------------------------------------------------------------------

TERMINAL_RESEARCH_STATUSES = frozenset({"completed", "failed", "cancelled"})


class ResearchProgress(Model):
    step: str = ""
    percent: int = 0
    sources_found: int = 0
    sources_read: int = 0


class Finding(Model):
    text: str
    citations: list[int] = Field(default_factory=list)


class ReportSource(Model):
    number: int
    title: str = ""
    url: str | None = None
    kind: str = ""
    published: str | None = None
    document_id: str | None = None


class Report(Model):
    summary: str = ""
    findings: list[Finding] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    sources: list[ReportSource] = Field(default_factory=list)


class ResearchSession(Model):
    id: str
    topic: str
    status: str
    scope: str = ""
    graph_id: str | None = None
    graph_name: str = ""
    model: str = ""
    created: str = ""
    completed: str | None = None
    progress: ResearchProgress = Field(default_factory=ResearchProgress)
    credits_held: int = 0
    credits_spent: int = 0
    note: str = ""
    error: str = ""
    papers: int = 0
    articles: int = 0
    watch: str | None = None
    watch_of: str | None = None
    report: Report | None = None
    # Only in the answer of POST /research/:
    credits_charged: int | None = None
    balance: int | None = None

    @property
    def done(self) -> bool:
        return self.status in TERMINAL_RESEARCH_STATUSES


# --- billing ---------------------------------------------------------------------------------------


class Balance(Model):
    balance: int
    held: int = 0
    plan: str = ""
    rate_limits: dict[str, Any] = Field(default_factory=dict)
    purchases_enabled: bool = False
