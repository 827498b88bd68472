"""REST: create_research_session, get_research_status, list_research_sessions, cancel and export."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.metering import DryRunField, Meter
from billing.services import quote_out
from exograph.core.api import Cursor, ScopeField, actor_of, range_field, request_scope, validated
from exograph.core.schema import IDEMPOTENCY_KEY_HEADER, api_errors
from exograph.core.scope import Scope
from exograph.documents.serializers import QuoteOutSerializer
from research.selectors import research_session_get_for_user, research_session_list_for_user
from research.serializers import research_session_created_out, research_session_out, research_session_summary_out
from research.services import (
    research_export_docx,
    research_export_filename,
    research_export_markdown,
    research_session_cancel,
    research_session_quote,
    research_session_start,
)

CREATE_ENDPOINT = "research.create"
DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _step_prices() -> str:
    rows = []
    for model, prices in settings.RESEARCH_STEP_PRICES.items():
        parts = ", ".join(f"{step} {price}" for step, price in prices.items())
        rows.append(f"{model}: {parts}")
    return "; ".join(rows)


class ResearchPagination(Cursor):
    page_size = 10
    max_page_size = 100
    ordering = ("-created", "-id")


# --- output shapes (documentation; the dicts come from research.serializers) ------------------------


class ProgressOutSerializer(serializers.Serializer):
    step = serializers.CharField(help_text="queued, plan, search, select, read, index, synthesise, done")
    percent = serializers.IntegerField()
    sources_found = serializers.IntegerField()
    sources_read = serializers.IntegerField()


class FindingOutSerializer(serializers.Serializer):
    text = serializers.CharField()
    citations = serializers.ListField(child=serializers.IntegerField(), help_text="numbers of report.sources")


class ReportSourceOutSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    title = serializers.CharField()
    url = serializers.CharField(allow_null=True)
    kind = serializers.CharField(help_text="paper, article or local")
    published = serializers.DateField(allow_null=True)
    document_id = serializers.CharField(allow_null=True, help_text="the ingested document in the session's graph")


class ReportOutSerializer(serializers.Serializer):
    summary = serializers.CharField()
    findings = FindingOutSerializer(many=True)
    open_questions = serializers.ListField(child=serializers.CharField())
    sources = ReportSourceOutSerializer(many=True)


class ResearchSummaryOutSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    topic = serializers.CharField()
    status = serializers.CharField(help_text="pending, running, completed, failed or cancelled")
    scope = serializers.CharField()
    graph_id = serializers.CharField(allow_null=True)
    graph_name = serializers.CharField(allow_blank=True)
    model = serializers.CharField()
    created = serializers.DateTimeField()
    completed = serializers.DateTimeField(allow_null=True)
    progress = ProgressOutSerializer()
    credits_held = serializers.IntegerField(help_text="the budget held at creation")
    credits_spent = serializers.IntegerField(help_text="captured by the steps so far; the rest is released at the end")
    note = serializers.CharField(allow_blank=True, help_text="e.g. the budget ran out")
    error = serializers.CharField(allow_blank=True, help_text="why the session failed")
    papers = serializers.IntegerField()
    articles = serializers.IntegerField()
    watch = serializers.CharField(allow_null=True, help_text="daily or weekly: a watch topic; null otherwise")
    watch_of = serializers.UUIDField(allow_null=True, help_text="the watch topic this run belongs to")


class ResearchOutSerializer(ResearchSummaryOutSerializer):
    report = ReportOutSerializer(allow_null=True)


class ResearchCreatedOutSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    topic = serializers.CharField()
    status = serializers.CharField()
    scope = serializers.CharField()
    graph_id = serializers.CharField()
    graph_name = serializers.CharField()
    model = serializers.CharField()
    credits_held = serializers.IntegerField()
    credits_spent = serializers.IntegerField()
    credits_charged = serializers.IntegerField(help_text="credits reserved by this request (= credits_held)")
    created = serializers.DateTimeField()
    watch = serializers.CharField(allow_null=True)
    balance = serializers.IntegerField()


class ResearchQuoteOutSerializer(QuoteOutSerializer):
    credits_needed = serializers.IntegerField(help_text="the hold the session would take: budget_credits or the price")
    model = serializers.CharField()


class ResearchPageOutSerializer(serializers.Serializer):
    results = ResearchSummaryOutSerializer(many=True)
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)


# --- views ---------------------------------------------------------------------------------------


class ResearchListCreateApi(APIView):
    class ResearchCreateSerializer(serializers.Serializer):
        query = serializers.CharField(
            allow_blank=True, trim_whitespace=False, help_text="the topic, 3-2,000 characters"
        )
        budget_credits = serializers.IntegerField(
            required=False, allow_null=True, help_text="at least the model's price (snap 30, ponder 100); default it"
        )
        graph_id = serializers.CharField(required=False, allow_blank=True, allow_null=True, max_length=64)
        graph_scope = ScopeField()
        model = serializers.CharField(required=False, max_length=40, help_text="snap (default) or ponder")
        # The caps and rules are research_session_create's (one validator for REST, MCP and the web form).
        sources = serializers.ListField(
            child=serializers.CharField(max_length=20),
            required=False,
            help_text="some of paper, article, local, each once (default all); local: the World Graph, and in a "
            "private session your own private documents too (a world session never reads private documents)",
        )
        date_from = serializers.DateField(required=False, allow_null=True)
        date_to = serializers.DateField(required=False, allow_null=True)
        excluded_domains = serializers.ListField(
            child=serializers.CharField(max_length=300),
            required=False,
            help_text="at most 50 bare host names like example.com (no scheme, path or port); subdomains too",
        )
        watch = serializers.ChoiceField(choices=["daily", "weekly"], required=False, allow_null=True)
        dry_run = DryRunField(
            help_text="true: answer the hold it would take (credits_needed: the budget) and whether it is covered; "
            "hold and create nothing."
        )

    class ResearchListSerializer(serializers.Serializer):
        graph_scope = ScopeField()
        limit = range_field(maximum=100, default=10)
        cursor = serializers.CharField(required=False, max_length=500)

    @extend_schema(
        operation_id="research_list",
        parameters=[ResearchListSerializer],
        responses={200: ResearchPageOutSerializer},
        summary="list_research_sessions: newest first (free, cursor-paged)",
    )
    def get(self, request: Request) -> Response:
        """list_research_sessions(graph_scope?, limit=10): limit 1..100, else 400; of the request's scope
        (request_scope: graph_scope, else the X-Graph-Scope header, else private)."""
        data = validated(self.ResearchListSerializer, request.query_params)
        sessions = research_session_list_for_user(user=actor_of(request), scope=request_scope(request, data))
        paginator = ResearchPagination()
        page = paginator.paginate_queryset(sessions, request, view=self)
        return paginator.get_paginated_response([research_session_summary_out(s) for s in page or []])

    @extend_schema(
        operation_id="research_create",
        request=ResearchCreateSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            202: ResearchCreatedOutSerializer,
            200: OpenApiResponse(
                ResearchQuoteOutSerializer,
                description="dry_run=true: the quote (credits_needed, balance, covered; refusal when not covered).",
            ),
            **api_errors(
                402,
                403,
                404,
                409,
                422,
                e403="The API key's monthly credit cap does not cover the budget (key_monthly_cap_reached).",
                e404="graph_id is not a graph of yours.",
                e409="A request with this Idempotency-Key is still running.",
            ),
        },
        summary="create_research_session: holds budget_credits (default snap 30, ponder 100)",
        description=(
            "Validates the query (3-2,000 characters), the budget (a whole number, at least the model's price, "
            "at most your balance: 402) and graph_id (yours, of the session's scope), holds the budget and queues "
            "the session. Each pipeline step captures its price from the hold and the rest is released at the "
            f"end, on cancel or on failure. Step prices: {_step_prices()}. Without graph_id a research graph named "
            "after the topic is created. watch daily|weekly re-runs the topic on a schedule (each run with its own "
            "budget, reading only sources it has not read). Send an Idempotency-Key to make retries safe; dry_run=true "
            "quotes the hold (the same checks and decision: the API key's monthly cap, then the balance) and holds "
            "and creates nothing."
        ),
    )
    def post(self, request: Request) -> Any:
        """create_research_session: validate (nothing held on bad input), hold, queue; 202. dry_run: the quote."""
        data = validated(self.ResearchCreateSerializer, request.data, strict=True)
        meter = Meter.from_request(request, endpoint=CREATE_ENDPOINT)
        # The session as asked for: a quote and the real call validate and decide on the same arguments.
        asked: dict[str, Any] = {
            "query": data["query"],
            "budget_credits": data.get("budget_credits"),
            "graph_id": data.get("graph_id") or None,
            "scope": Scope(data["graph_scope"]) if data.get("graph_scope") else None,
            "default_scope": request_scope(request, {}),  # with no graph_scope and no graph_id
            "model": data.get("model") or "snap",
            "sources": data.get("sources"),
            "date_from": data.get("date_from"),
            "date_to": data.get("date_to"),
            "excluded_domains": data.get("excluded_domains"),
            "watch": data.get("watch"),
        }
        if meter.dry_run:
            quote = research_session_quote(actor=meter.account, **asked)
            return Response({**quote_out(quote), "model": asked["model"]})

        def start(key: str) -> tuple[dict[str, Any], int]:
            session, spent = research_session_start(actor=meter.account, idempotency_key=key, **asked)
            return {**research_session_created_out(session), **spent.fields()}, 202

        return meter.run(start)


class ResearchDetailApi(APIView):
    @extend_schema(
        operation_id="research_get",
        responses={200: ResearchOutSerializer, **api_errors(404)},
        summary="get_research_status: status, progress, credits and (when completed) the report (free)",
    )
    def get(self, request: Request, session_id: str) -> Response:
        """get_research_status: a foreign or unknown id is a 404."""
        session = research_session_get_for_user(user=actor_of(request), session_id=session_id)
        return Response(research_session_out(session))


class ResearchCancelApi(APIView):
    @extend_schema(
        operation_id="research_cancel",
        request=None,
        responses={
            200: ResearchOutSerializer,
            **api_errors(404, 409, e409="The session is already finished (and is not a watch topic)."),
        },
        summary="Cancel a session (the rest of its hold is released) or stop a watch topic",
    )
    def post(self, request: Request, session_id: str) -> Response:
        """Cancel a pending/running session, or stop re-running a finished watch topic."""
        session = research_session_cancel(actor=actor_of(request), session_id=session_id)
        return Response(research_session_out(session))


class _IgnoreFormatNegotiation(DefaultContentNegotiation):
    """`format` is this endpoint's own parameter (md | docx), not DRF's renderer override."""

    def select_renderer(self, request: Request, renderers: Any, format_suffix: Any = None) -> Any:
        renderer = renderers[0]
        return renderer, renderer.media_type


class ResearchExportApi(APIView):
    content_negotiation_class = _IgnoreFormatNegotiation

    class ResearchExportSerializer(serializers.Serializer):
        format = serializers.ChoiceField(
            choices=["md", "docx"],
            default="md",
            error_messages={"invalid_choice": "must be 'md' or 'docx'; got \"{input}\"."},
        )

    @extend_schema(
        operation_id="research_export",
        parameters=[
            OpenApiParameter("format", str, OpenApiParameter.QUERY, required=False, enum=["md", "docx"]),
        ],
        responses={
            (200, "text/markdown"): OpenApiResponse(OpenApiTypes.STR, description="the report as Markdown"),
            (200, DOCX_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description="the report as DOCX"),
            **api_errors(404, 409, e409="The session is not completed yet."),
        },
        summary="Export a completed report as Markdown or DOCX",
    )
    def get(self, request: Request, session_id: str) -> HttpResponse:
        """The report file; 409 until the session is completed."""
        data = validated(self.ResearchExportSerializer, request.query_params)
        session = research_session_get_for_user(user=actor_of(request), session_id=session_id)
        if data["format"] == "docx":
            response = HttpResponse(research_export_docx(session=session), content_type=DOCX_TYPE)
            name = research_export_filename(session, "docx")
        else:
            response = HttpResponse(
                research_export_markdown(session=session), content_type="text/markdown; charset=utf-8"
            )
            name = research_export_filename(session, "md")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
