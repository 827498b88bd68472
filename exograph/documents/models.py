"""Documents: one row per uploaded file, its bytes until processed, and its chunks between stages."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from exograph.core.models import TimeStampedModel


class DocumentType(models.TextChoices):
    PDF = "pdf", "PDF"
    DOCX = "docx", "DOCX"
    TEXT = "text", "Plain text"
    MARKDOWN = "markdown", "Markdown"


# Text documents have no sandboxed parse: they are decoded and split in-process.
TEXT_TYPES = (DocumentType.TEXT, DocumentType.MARKDOWN)


class SourceType(models.TextChoices):
    """Where a document came from: an upload, or (for text documents) what research read."""

    UPLOAD = "upload", "Upload"
    ARTICLE = "article", "Article"
    PAPER = "paper", "Paper"
    LOCAL = "local", "Local file"


class DocumentStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    PROCESSING = "processing", "Processing"
    PROCESSED = "processed", "Processed"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class DocumentStage(models.TextChoices):
    QUEUED = "queued", "Queued"
    PARSE = "parse", "Parse"
    CHUNK = "chunk", "Chunk"
    EMBED = "embed", "Embed"
    EXTRACT = "extract", "Extract"
    WRITE = "write", "Write graph"
    DONE = "done", "Done"


# Statuses in which the pipeline may still run.
ACTIVE_STATUSES = (DocumentStatus.PENDING, DocumentStatus.PROCESSING)


class Document(TimeStampedModel):
    """An uploaded PDF/DOCX or text/Markdown document and its progress through the ingest pipeline."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="documents")
    graph = models.ForeignKey("graphs.Graph", on_delete=models.CASCADE, related_name="documents")
    filename = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveBigIntegerField()
    content_type = models.CharField(max_length=8, choices=DocumentType.choices)
    pages = models.PositiveIntegerField()
    pages_estimated = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=DocumentStatus.choices, default=DocumentStatus.PENDING)
    stage = models.CharField(max_length=16, choices=DocumentStage.choices, default=DocumentStage.QUEUED)
    progress = models.PositiveSmallIntegerField(default=0)
    failure_stage = models.CharField(max_length=16, blank=True, default="")
    failure_reason = models.TextField(blank=True, default="")
    credits_charged = models.PositiveIntegerField(default=0)
    # The ledger idempotency key of the upload charge (refunds point at it).
    charge_key = models.CharField(max_length=200, blank=True, default="")
    refunded = models.BooleanField(default=False)
    # A charge-free retry is allowed once per failure; a retry after a refund charges again (paid once overall).
    attempts = models.PositiveSmallIntegerField(default=1)
    chunk_count = models.PositiveIntegerField(default=0)
    entity_count = models.PositiveIntegerField(default=0)
    relation_count = models.PositiveIntegerField(default=0)
    processed_at = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    # What the owner should know about how it was processed (e.g. the LLM extractor fell back): {"code", "message"}.
    warnings = models.JSONField(default=list, blank=True)
    # Provenance, so an answer can cite it: a display title (text documents; else blank), the URL it was read
    # from, what kind of source it is, and its publication date when known.
    title = models.CharField(max_length=500, blank=True, default="")
    source_url = models.URLField(max_length=2000, blank=True, default="")
    source_type = models.CharField(max_length=16, choices=SourceType.choices, default=SourceType.UPLOAD)
    published = models.DateField(null=True, blank=True)
    # Which engines read the text, set by the parse stage: "pypdf", "pdfium" (the second PDF engine),
    # "ocr", joined by "+" when pages differ ("pypdf+ocr"); "python-docx"; "text"/"markdown". Blank until parsed.
    text_engine = models.CharField(max_length=32, blank=True, default="")
    # PDF pages read by OCR (they have no text layer); priced like any other page.
    ocr_pages = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(
                fields=["graph", "sha256"],
                condition=Q(deleted_at__isnull=True),
                name="documents_document_graph_sha256_live_unique",
            ),
            models.CheckConstraint(condition=Q(progress__lte=100), name="documents_document_progress_max_100"),
        ]
        indexes = [models.Index(fields=["owner", "created"])]

    def __str__(self) -> str:
        return f"{self.filename} ({self.id})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES


class DocumentBlob(models.Model):
    """The uploaded bytes, kept in the database so any worker can read them; dropped once processed."""

    document = models.OneToOneField(Document, on_delete=models.CASCADE, primary_key=True, related_name="blob")
    data = models.BinaryField()
    # The extraction result between the embed stage (which computes it alongside embedding) and the write.
    extraction = models.JSONField(null=True, blank=True)

    def __str__(self) -> str:
        return f"blob of {self.document_id}"


class DocumentOriginal(models.Model):
    """A processed PDF's original bytes, kept for the document viewer (pdf.js renders its pages); served only to
    the document's owner and deleted with the document. Moved here from DocumentBlob when processing ends."""

    document = models.OneToOneField(Document, on_delete=models.CASCADE, primary_key=True, related_name="original")
    data = models.BinaryField()

    def __str__(self) -> str:
        return f"original of {self.document_id}"


class DocumentChunk(models.Model):
    """A chunk between pipeline stages (parse → embed → extract/write). Rebuilt by a retry."""

    id = models.CharField(primary_key=True, max_length=64)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    page = models.PositiveIntegerField(null=True, blank=True)
    heading = models.CharField(max_length=500, blank=True, default="")
    text = models.TextField()
    embedding = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["document", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="documents_chunk_document_ordinal_unique")
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"
