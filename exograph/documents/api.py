"""REST: upload (multipart, base64 or file_path), list, get, delete, cancel and retry documents."""

from __future__ import annotations

from typing import Any, cast

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.metering import DryRunField, Meter
from billing.services import quote_out
from exograph.core.api import Pagination, ScopeField, actor_of, request_scope, validated
from exograph.core.errors import PayloadTooLarge, ValidationError
from exograph.core.parsers import JSONParser, MultiPartParser
from exograph.core.schema import IDEMPOTENCY_KEY_HEADER, api_errors
from exograph.documents.selectors import document_get_for_user, document_list_for_user
from exograph.documents.serializers import (
    DocumentListItemOutSerializer,
    DocumentOutSerializer,
    DocumentUploadOutSerializer,
    DocumentUploadQuoteOutSerializer,
    QuoteOutSerializer,
    document_list_item,
    document_out,
)
from exograph.documents.services import (
    document_cancel,
    document_delete,
    document_retry,
    document_retry_quote,
    document_upload,
    document_upload_prepare,
    document_upload_quote,
    text_upload_build,
)
from exograph.documents.validation import (
    UploadedFile,
    content_decode_base64,
    size_check,
    upload_path_read,
    upload_path_resolve,
    upload_validate,
)

UPLOAD_ENDPOINT = "documents.upload"
RETRY_ENDPOINT = "documents.retry"


def _upload_from(data: dict[str, Any]) -> UploadedFile:
    """Exactly one of: multipart `file`; `file_content_base64` + `filename`; `file_path`; `text` + `title`."""
    given = [name for name in ("file", "file_content_base64", "file_path", "text") if data.get(name) is not None]
    given = [name for name in given if name == "text" or data.get(name) != ""]
    hint = "Send multipart 'file', or JSON {file_content_base64, filename}, or JSON {file_path}, or JSON {text, title}."
    if len(given) != 1:
        raise ValidationError(
            "Send exactly one of file, file_content_base64, file_path or text"
            + (f"; got {', '.join(given)}." if given else "; got none."),
            code="invalid_upload",
            hint=hint,
        )
    provenance = {"title": data.get("title") or "", "source_url": data.get("source_url") or ""}
    if given[0] == "text":
        if len(data["text"]) > settings.DOCUMENTS_TEXT_MAX_CHARS:
            raise PayloadTooLarge(
                f"The text has {len(data['text'])} characters; the limit is {settings.DOCUMENTS_TEXT_MAX_CHARS}.",
                code="text_too_large",
                hint="Split the text into smaller documents and upload them separately.",
            )
        return text_upload_build(
            markdown=data.get("text_format", "markdown") == "markdown", text=data["text"], **provenance
        )
    if given[0] == "file":
        upload = data["file"]
        size_check(int(upload.size or 0))
        content = upload.read(settings.DOCUMENTS_MAX_BYTES + 1)
        return upload_validate(filename=data.get("filename") or upload.name, data=content, **provenance)
    if given[0] == "file_content_base64":
        encoded: str = data["file_content_base64"]
        if len(encoded) * 3 // 4 > settings.DOCUMENTS_MAX_BYTES + 8:
            raise PayloadTooLarge(
                f"The file is larger than the limit of {settings.DOCUMENTS_MAX_BYTES} bytes.",
                code="file_too_large",
                hint="Split the document into smaller files and upload them separately.",
            )
        if not data.get("filename"):
            raise ValidationError(
                "filename is required with file_content_base64.",
                code="invalid_filename",
                hint='Add the file\'s name, e.g. {"filename": "report.pdf"}.',
            )
        return upload_validate(filename=data["filename"], data=content_decode_base64(encoded), **provenance)
    path = upload_path_resolve(data["file_path"])
    return upload_validate(filename=data.get("filename") or path.name, data=upload_path_read(path))


class _UploadOptionsInSerializer(serializers.Serializer):
    """What every upload mode may add (documentation of DocumentListCreateApi.UploadSerializer)."""

    graph_scope = ScopeField()
    graph_id = serializers.CharField(
        required=False, max_length=64, help_text="Upload into this graph; default: your default graph of the scope."
    )
    dry_run = DryRunField(help_text="true: answer the price, charge and store nothing.")


class UploadMultipartInSerializer(_UploadOptionsInSerializer):
    file = serializers.FileField(help_text="The PDF, DOCX, .txt or .md file.")
    title = serializers.CharField(required=False, max_length=500, help_text="A display title (text files).")
    source_url = serializers.URLField(required=False, max_length=2000, help_text="Where it was read from.")
    filename = serializers.CharField(required=False, max_length=4096, help_text="Default: the part's file name.")


@extend_schema_field(OpenApiTypes.BYTE)
class _Base64Field(serializers.CharField):
    """A base64 string (format: byte in the schema)."""


class UploadBase64InSerializer(_UploadOptionsInSerializer):
    file_content_base64 = _Base64Field(help_text="The file's bytes, base64-encoded.")
    filename = serializers.CharField(max_length=4096, help_text="The file's name, e.g. report.pdf.")


class UploadPathInSerializer(_UploadOptionsInSerializer):
    file_path = serializers.CharField(
        max_length=4096, help_text="A file under the server's EXOGRAPH_UPLOAD_ROOT (self-hosted servers only)."
    )
    filename = serializers.CharField(required=False, max_length=4096, help_text="Default: the path's file name.")


class UploadTextInSerializer(_UploadOptionsInSerializer):
    text = serializers.CharField(help_text="A plain-text or Markdown document (UTF-8), instead of a file.")
    title = serializers.CharField(max_length=500, help_text="Its title: shown, cited, and made an entity.")
    source_url = serializers.URLField(required=False, max_length=2000, help_text="Where it was read from.")
    text_format = serializers.ChoiceField(
        choices=["markdown", "plain"], required=False, help_text="markdown (default: # headings are sections) or plain."
    )


UPLOAD_JSON = PolymorphicProxySerializer(
    component_name="DocumentUploadJson",
    serializers=[UploadBase64InSerializer, UploadPathInSerializer, UploadTextInSerializer],
    resource_type_field_name=None,
    many=False,
)
UPLOAD_200 = OpenApiResponse(
    PolymorphicProxySerializer(
        component_name="DocumentUploadUnchangedOrQuote",
        serializers=[DocumentUploadOutSerializer, DocumentUploadQuoteOutSerializer],
        resource_type_field_name=None,
        many=False,
    ),
    description="dry_run=true: the price (nothing charged); else the same file was already in the graph: "
    "status 'unchanged', nothing charged.",
)


class DocumentListCreateApi(APIView):
    parser_classes = [JSONParser, MultiPartParser]
    pagination_class = Pagination  # documents GET as the paginated object it returns (limit/offset)

    class UploadSerializer(serializers.Serializer):
        file = serializers.FileField(required=False, allow_empty_file=True)
        file_content_base64 = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
        filename = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, max_length=4096)
        file_path = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False, max_length=4096)
        text = serializers.CharField(
            required=False,
            allow_blank=True,
            trim_whitespace=False,
            help_text="A plain-text or Markdown document sent as JSON (with title); instead of a file.",
        )
        text_format = serializers.ChoiceField(
            choices=["markdown", "plain"], required=False, help_text="How to read text (default markdown)."
        )
        title = serializers.CharField(
            required=False, allow_blank=True, max_length=4096, help_text="Display title (required with text)."
        )
        source_url = serializers.CharField(
            required=False, allow_blank=True, max_length=4096, help_text="Where the text was read from (http/https)."
        )
        graph_scope = ScopeField()
        graph_id = serializers.CharField(required=False, allow_blank=True, max_length=64)
        # dry_run (query or body, a JSON boolean too) is read by Meter.from_request (parse_dry_run).

    class ListSerializer(serializers.Serializer):
        graph_scope = ScopeField()

    @extend_schema(
        operation_id="documents_list",
        parameters=[ListSerializer],
        responses=DocumentListItemOutSerializer(many=True),
        summary="list_documents: your documents, newest first (paged)",
    )
    def get(self, request: Request) -> Response:
        """list_documents: newest first, paged (limit/offset), in graphs of graph_scope (default: the request's)."""
        data = validated(self.ListSerializer, request.query_params)
        documents = document_list_for_user(user=actor_of(request), scope=request_scope(request, data))
        paginator = Pagination()
        page = paginator.paginate_queryset(documents, request, view=self)
        return paginator.get_paginated_response([document_list_item(d) for d in page or []])

    @extend_schema(
        operation_id="documents_upload",
        request={"multipart/form-data": UploadMultipartInSerializer, "application/json": UPLOAD_JSON},
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: DocumentUploadOutSerializer,
            200: UPLOAD_200,
            **api_errors(
                402,
                403,
                404,
                409,
                413,
                415,
                422,
                e403="file_path uploads are disabled on this server, or the path is outside the upload root.",
                e415="Not a PDF, DOCX, text or Markdown file (the type is read from the content), or a body that is not JSON or multipart.",
                e404="No graph with this graph_id in your account.",
                e409="The file is already in the graph as a failed or cancelled document (`document_id`), "
                "or a request with this Idempotency-Key is still running.",
            ),
        },
        summary="upload_document: PDF, DOCX, text or Markdown; 5 credits + 1 per page (text: per 3,000 characters)",
        description=(
            "Send exactly one of: multipart `file`; JSON `file_content_base64` with `filename`; JSON `file_path`; "
            "JSON `text` with `title` (and optionally `source_url`). "
            "Idempotency-Key and dry_run=true are supported. "
            "Costs 5 credits + 1 per page. A PDF's pages are its page count (at most DOCUMENTS_MAX_PAGES, "
            "2,000 by default; a larger file is refused before it is read, for free). A DOCX's pages are the "
            "larger of the count its docProps/app.xml declares and an estimate from its text: one page per "
            "500 words or 3,000 characters, whichever gives more (`pages_estimated` is true when the estimate "
            "decided). Plain text (.txt) and Markdown (.md) files, or a JSON body {text, title, source_url?}, "
            "cost 5 credits + 1 per 3,000 characters (DOCUMENTS_TEXT_CHARS_PER_UNIT), at least 1; they must be "
            "UTF-8 (a BOM is dropped; other encodings and binary bytes are refused, 400) and at most "
            "DOCUMENTS_TEXT_MAX_CHARS characters (2,000,000 by default; larger is refused, 413, for free). Their "
            "`pages` are those billing units. Markdown headings become the chunks' section headings, and the "
            "title becomes an entity of the graph. dry_run=true quotes the same number without charging. "
            "Scanned or image-only PDF pages are read by OCR and priced like any other page (the charge equals "
            "the quote); at most DOCUMENTS_OCR_MAX_PAGES (100 by default) pages of one PDF are OCR'd, a file "
            "needing more is refused (400 too_many_ocr_pages) before anything is charged. A PDF that pypdf reads "
            "as garbage or cannot open is read by a second engine (pdfium); `text_engine` names the engines used."
        ),
    )
    def post(self, request: Request) -> Response:
        """upload_document: 5 credits + 1 per page; Idempotency-Key and dry_run=true supported."""
        meter = Meter.from_request(request, endpoint=UPLOAD_ENDPOINT)
        data = validated(self.UploadSerializer, request.data, also=("dry_run",))
        upload = _upload_from(data)
        prepared = document_upload_prepare(
            actor=meter.account,
            upload=upload,
            scope=request_scope(request, data),
            graph_id=data.get("graph_id") or None,
            scope_argument=data.get("graph_scope") or None,
        )
        if meter.dry_run:
            quote = document_upload_quote(actor=meter.account, prepared=prepared)
            fields = ("dry_run", "credits_needed", "balance", "covered", "refusal", "filename", "pages")
            return Response(
                {
                    **{name: quote[name] for name in fields if name in quote},
                    "pages_estimated": quote["pages_estimated"],
                    "scope": prepared.graph.scope,
                    "graph_id": prepared.graph.id,
                    "duplicate_of": quote["duplicate_of"],
                }
            )

        def work(key: str) -> tuple[dict[str, Any], int]:
            outcome = document_upload(actor=meter.account, prepared=prepared, idempotency_key=key)
            if not outcome.created:
                return {**document_out(outcome.document, status="unchanged"), **outcome.spent.fields()}, 200
            return {**document_out(outcome.document), **outcome.spent.fields()}, 201

        return cast(Response, meter.run(work))


class DocumentDetailApi(APIView):
    @extend_schema(
        operation_id="documents_get",
        responses={200: DocumentOutSerializer, **api_errors(404)},
        summary="A document: status, stage, progress, failure",
    )
    def get(self, request: Request, document_id: str) -> Response:
        document = document_get_for_user(user=actor_of(request), document_id=document_id)
        return Response(document_out(document))

    @extend_schema(
        operation_id="documents_delete",
        responses={204: None, **api_errors(404)},
        summary="Delete a document and its knowledge (world contributions included); refunded if not processed yet",
    )
    def delete(self, request: Request, document_id: str) -> Response:
        document_delete(actor=actor_of(request), document_id=document_id)
        return Response(status=204)


class DocumentCancelApi(APIView):
    @extend_schema(
        operation_id="documents_cancel",
        request=None,
        responses={
            200: DocumentOutSerializer,
            **api_errors(404, 409, e409="The document is not pending or processing."),
        },
        summary="Cancel processing (refunded)",
    )
    def post(self, request: Request, document_id: str) -> Response:
        document = document_cancel(actor=actor_of(request), document_id=document_id)
        return Response(document_out(document))


class DocumentRetryApi(APIView):
    class RetryInSerializer(serializers.Serializer):
        dry_run = DryRunField()

    @extend_schema(
        operation_id="documents_retry",
        request=RetryInSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            202: DocumentUploadOutSerializer,
            200: OpenApiResponse(QuoteOutSerializer, description="dry_run=true: the price; nothing charged."),
            **api_errors(
                402,
                404,
                409,
                422,
                e409="A worker is running the document's stage now (only failed, cancelled, or pending or "
                "processing documents no worker runs can be retried), its file is gone, or a request with this "
                "Idempotency-Key is still running.",
            ),
        },
        summary="Retry a failed or cancelled document, or resume an interrupted one (never paid twice)",
    )
    def post(self, request: Request, document_id: str) -> Response:
        meter = Meter.from_request(request, endpoint=RETRY_ENDPOINT)
        validated(self.RetryInSerializer, request.data)  # the body takes dry_run (the Meter's) and nothing else
        if meter.dry_run:
            return Response(quote_out(document_retry_quote(actor=meter.account, document_id=document_id)))

        def retry(key: str) -> tuple[dict[str, Any], int]:
            retried, spent = document_retry(actor=meter.account, document_id=document_id, idempotency_key=key)
            return {**document_out(retried), **spent.fields()}, 202

        return cast(Response, meter.run(retry))
