"""REST: POST /api/v1/graphs/{id}/import/ (graphs.services.imports does the work)."""

from __future__ import annotations

from typing import Any, cast

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.metering import DryRunField, Meter
from exograph.core.api import validated
from exograph.core.errors import PayloadTooLarge, ValidationError
from exograph.core.schema import IDEMPOTENCY_KEY_HEADER, api_errors
from exograph.graphs.services.import_rows import IMPORT_FORMATS
from exograph.graphs.services.imports import (
    graph_import,
    graph_import_prepare,
    graph_import_quote,
)

IMPORT_ENDPOINT = "graphs.import"
MAX_IMPORT_CHARS = 20_000_000

_FORMAT_HELP = (
    "jsonl: one JSON object a line, {subject, predicate, object} and optional source, evidence, subject_type, "
    "object_type, page; csv: a header row naming those columns. A graph's own export (jsonl or csv, with its "
    "`record` field) is read back too."
)


class ImportInSerializer(serializers.Serializer):
    format = serializers.ChoiceField(
        choices=list(IMPORT_FORMATS),
        help_text=_FORMAT_HELP,
        error_messages={
            "required": "send the batch's format, 'jsonl' or 'csv'.",
            "invalid_choice": "must be 'jsonl' or 'csv'; got \"{input}\".",
        },
    )
    content = serializers.CharField(
        required=False, allow_blank=False, trim_whitespace=False, help_text="The batch as text (or send `file`)."
    )
    file = serializers.FileField(required=False, help_text="The batch as a UTF-8 file (multipart; or send `content`).")
    dry_run = DryRunField()


class ImportQuoteOutSerializer(serializers.Serializer):
    dry_run = serializers.BooleanField()
    credits_needed = serializers.IntegerField()
    balance = serializers.IntegerField()
    covered = serializers.BooleanField()
    refusal = serializers.DictField(required=False, help_text="The real call's error, when not covered.")
    graph_id = serializers.CharField()
    format = serializers.CharField()
    rows = serializers.IntegerField(help_text="Billing rows: triples and entity records.")
    triples = serializers.IntegerField()
    entity_records = serializers.IntegerField()


class ImportOutSerializer(serializers.Serializer):
    graph_id = serializers.CharField()
    format = serializers.CharField()
    rows = serializers.IntegerField()
    triples = serializers.IntegerField()
    entity_records = serializers.IntegerField()
    entities = serializers.IntegerField(help_text="Distinct entities the batch names.")
    entities_joined = serializers.IntegerField(help_text="Of those, entities the graph already held (resolved).")
    documents_written = serializers.IntegerField(help_text="Sources written (one store document per source).")
    documents_unchanged = serializers.IntegerField(help_text="Sources imported before with the same rows.")
    credits_charged = serializers.IntegerField()
    balance = serializers.IntegerField()


def _content(data: dict[str, Any]) -> str:
    upload, text = data.get("file"), data.get("content")
    if (upload is None) == (text is None):
        raise ValidationError(
            "Send the batch as `content` (text) or as `file`, one of them.",
            code="invalid",
            hint="JSON: {format, content}; multipart: format and file.",
            extra={"fields": {"content": ["Send content or file."]}},
        )
    if upload is not None:
        if upload.size > MAX_IMPORT_CHARS:
            raise PayloadTooLarge(f"An import holds at most {MAX_IMPORT_CHARS:,} bytes.", hint="Split the file.")
        try:
            text = upload.read().decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValidationError(
                "The file is not UTF-8 text.", code="invalid_encoding", hint="Save it as UTF-8."
            ) from None
    text = str(text)
    if len(text) > MAX_IMPORT_CHARS:
        raise PayloadTooLarge(f"An import holds at most {MAX_IMPORT_CHARS:,} characters.", hint="Split the batch.")
    return text


class GraphImportApi(APIView):
    @extend_schema(
        operation_id="graphs_import",
        request={"application/json": ImportInSerializer, "multipart/form-data": ImportInSerializer},
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: ImportOutSerializer,
            200: OpenApiResponse(ImportQuoteOutSerializer, description="dry_run=true: the quote."),
            **api_errors(
                400,
                402,
                403,
                404,
                413,
                503,
                e400="A bad row (the message names its line; `line` and `field` in the envelope: nothing was "
                "imported), an unknown format, an empty batch, or a shared (world-scope) graph.",
                e403="Another account's shared graph, or the API key's monthly cap.",
            ),
        },
        summary="Import facts (triples as JSONL or CSV) into a private graph: 5 credits per started 1,000 rows",
        description=(
            "Every row is validated before anything is charged or written. Entities are resolved against the "
            "graph (same normalised name or alias: the entity the graph holds). Each source becomes a document of "
            "the graph; evidence texts become its passages (a triple without evidence: its own sentence), so facts "
            "are searched, walked by graph mode and cited by chat with their source. The same rows imported again "
            "change nothing. dry_run=true quotes; send an Idempotency-Key to make retries safe."
        ),
    )
    def post(self, request: Request, graph_id: str) -> Response:
        meter = Meter.from_request(request, endpoint=IMPORT_ENDPOINT)
        data = validated(ImportInSerializer, request.data)
        prepared = graph_import_prepare(
            actor=meter.account, graph_id=graph_id, content=_content(data), fmt=data["format"]
        )
        if meter.dry_run:
            return Response(graph_import_quote(actor=meter.account, prepared=prepared))

        def work(key: str) -> tuple[dict[str, Any], int]:
            return graph_import(actor=meter.account, prepared=prepared, idempotency_key=key), 201

        return cast(Response, meter.run(work))
