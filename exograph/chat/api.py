"""REST: chat sessions (create, list, get with messages, rename, delete) and send_chat_message."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.metering import DryRunField, Meter
from billing.services import quote_out
from exograph.chat.metered import MESSAGE_ENDPOINT, chat_message_quote, chat_message_send_metered
from exograph.chat.models import ChatMessage, ChatSession
from exograph.chat.search import MAX_ITEMS, SEARCH_ENGINES, evidence_search
from exograph.chat.selectors import chat_message_list, chat_session_get_for_user, chat_session_list_for_user
from exograph.chat.services import (
    chat_message_prepare,
    chat_session_create,
    chat_session_delete,
    chat_session_rename,
)
from exograph.core.api import Cursor, ScopeField, actor_of, range_field, request_scope, validated
from exograph.core.schema import IDEMPOTENCY_KEY_HEADER, api_errors


class SessionPagination(Cursor):
    page_size = 50
    max_page_size = 200
    ordering = ("-modified", "-id")


class ChatSessionOutSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()
    model_name = serializers.CharField()
    reasoning_engine = serializers.CharField()
    graph_scope = serializers.CharField()
    graph_id = serializers.CharField(allow_null=True)
    created = serializers.DateTimeField()
    updated = serializers.DateTimeField()


class EvidenceOutSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    kind = serializers.CharField()
    origin = serializers.CharField(help_text="private, world or web")
    text = serializers.CharField()
    graph_id = serializers.CharField(allow_blank=True)
    document_id = serializers.CharField(allow_null=True)
    source = serializers.CharField(allow_blank=True, help_text="document file name or source title")  # type: ignore[assignment]  # a declared field, not Field.source
    url = serializers.CharField(allow_null=True)
    page = serializers.IntegerField(allow_null=True)
    chunk_id = serializers.CharField(allow_null=True)
    view_url = serializers.CharField(
        allow_null=True,
        required=False,
        help_text="the document viewer at this passage (page, highlighted); null when the document is not yours",
    )
    cited = serializers.BooleanField(required=False, help_text="the answer cites this item")


class CitationsOutSerializer(serializers.Serializer):
    grounded = serializers.BooleanField()
    support_score = serializers.FloatField()
    cited = serializers.ListField(child=serializers.IntegerField())
    invalid = serializers.ListField(child=serializers.IntegerField(), help_text="removed from the answer")
    uncited = serializers.ListField(child=serializers.CharField())
    unsupported = serializers.ListField(child=serializers.DictField())


class ChatMessageOutSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    role = serializers.CharField()
    content = serializers.CharField()
    created = serializers.DateTimeField()
    model_name = serializers.CharField(help_text="snap or ponder (assistant messages; empty for questions)")
    reasoning_engine = serializers.CharField(help_text="rag, graph or web (assistant messages; empty for questions)")
    evidence = EvidenceOutSerializer(many=True)
    citations = CitationsOutSerializer(required=False)
    usage = serializers.DictField()


class ChatSessionDetailOutSerializer(ChatSessionOutSerializer):
    messages = ChatMessageOutSerializer(many=True)


class SendOutSerializer(serializers.Serializer):
    session_id = serializers.UUIDField()
    message_id = serializers.UUIDField()
    title = serializers.CharField()
    answer = serializers.CharField()
    model = serializers.CharField()
    reasoning_engine = serializers.CharField()
    graph_scope = serializers.CharField()
    graph_id = serializers.CharField(allow_null=True)
    evidence = EvidenceOutSerializer(many=True, help_text="the evidence the answer cites")
    considered = EvidenceOutSerializer(
        many=True,
        help_text="all evidence handed to the model (passages, facts, relations, entities), each flagged cited",
    )
    answered = serializers.BooleanField(help_text="false: the documents don't answer the question (not charged)")
    short_answer = serializers.CharField(allow_blank=True, help_text="the short answer, when the evidence holds one")
    grounded = serializers.BooleanField()
    support_score = serializers.FloatField()
    citations = CitationsOutSerializer()
    usage = serializers.DictField()
    credits_charged = serializers.IntegerField()
    balance = serializers.IntegerField()


def session_out(session: ChatSession) -> dict[str, Any]:
    return {
        "id": str(session.id),
        "title": session.title,
        "model_name": session.model_name,
        "reasoning_engine": session.reasoning_engine,
        "graph_scope": session.graph_scope,
        "graph_id": session.graph_id or None,
        "created": session.created.isoformat(),
        "updated": session.modified.isoformat(),
    }


def message_out(message: ChatMessage) -> dict[str, Any]:
    cited = set((message.citations or {}).get("cited") or [])
    return {
        "id": str(message.id),
        "role": message.role,
        "content": message.content,
        "created": message.created.isoformat(),
        "model_name": message.model_name,
        "reasoning_engine": message.reasoning_engine,
        "evidence": [item for item in message.evidence or [] if item.get("n") in cited],
        "citations": message.citations or {},
        "usage": message.usage or {},
    }


def session_detail_out(session: ChatSession) -> dict[str, Any]:
    return {**session_out(session), "messages": [message_out(m) for m in chat_message_list(session=session)]}


class _ChoiceText(serializers.CharField):
    """A model/engine name; unknown values are rejected by the service with the allowed list."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", 40)
        super().__init__(**kwargs)


class ChatSessionListCreateApi(APIView):
    pagination_class = SessionPagination  # documents GET as the cursor-paged object it returns

    class CreateSerializer(serializers.Serializer):
        title = serializers.CharField(required=False, allow_blank=True, max_length=200)
        model_name = _ChoiceText(
            help_text="snap (fast, 3 credits/message) or ponder (deep, 10; 3 on the offline reader, which answers it as snap)"
        )
        reasoning_engine = _ChoiceText(help_text="rag, graph or web")
        graph_scope = ScopeField()
        graph_id = serializers.CharField(required=False, allow_blank=True, max_length=64)

    class ListSerializer(serializers.Serializer):
        graph_scope = ScopeField()

    @extend_schema(
        operation_id="chat_sessions_list",
        parameters=[ListSerializer],
        responses=ChatSessionOutSerializer(many=True),
        summary="list_chat_sessions: your sessions, most recently updated first (cursor-paged)",
    )
    def get(self, request: Request) -> Response:
        """list_chat_sessions: newest first, cursor-paged; of the request's scope (request_scope: graph_scope, else
        the X-Graph-Scope header, else private)."""
        data = validated(self.ListSerializer, request.query_params)
        sessions = chat_session_list_for_user(user=actor_of(request), scope=request_scope(request, data))
        paginator = SessionPagination()
        page = paginator.paginate_queryset(sessions, request, view=self)
        return paginator.get_paginated_response([session_out(s) for s in page or []])

    @extend_schema(
        operation_id="chat_sessions_create",
        request=CreateSerializer,
        responses={201: ChatSessionOutSerializer, **api_errors(404, e404="graph_id is not a graph you can read.")},
        summary="create_chat_session: free",
    )
    def post(self, request: Request) -> Response:
        """create_chat_session (free). 400 unknown model/engine or web unconfigured; 404 unreadable graph_id."""
        data = validated(self.CreateSerializer, request.data, strict=True)
        session = chat_session_create(
            actor=actor_of(request),
            title=data.get("title") or "",
            model_name=data.get("model_name") or "snap",
            reasoning_engine=data.get("reasoning_engine") or "rag",
            graph_scope=request_scope(request, data),
            graph_id=data.get("graph_id") or "",
            scope_argument=data.get("graph_scope") or None,
        )
        return Response(session_out(session), status=201)


class ChatSessionDetailApi(APIView):
    class RenameSerializer(serializers.Serializer):
        title = serializers.CharField(max_length=200)

    @extend_schema(operation_id="chat_sessions_get", responses={200: ChatSessionDetailOutSerializer, **api_errors(404)})
    def get(self, request: Request, session_id: str) -> Response:
        """One of your sessions with its messages; a foreign id is a 404."""
        session = chat_session_get_for_user(user=actor_of(request), session_id=session_id)
        return Response(session_detail_out(session))

    @extend_schema(
        operation_id="chat_sessions_rename",
        request=RenameSerializer,
        responses={200: ChatSessionOutSerializer, **api_errors(404)},
    )
    def patch(self, request: Request, session_id: str) -> Response:
        """Rename a session."""
        data = validated(self.RenameSerializer, request.data)
        session = chat_session_rename(actor=actor_of(request), session_id=session_id, title=data["title"])
        return Response(session_out(session))

    @extend_schema(operation_id="chat_sessions_delete", responses={204: None, **api_errors(404)})
    def delete(self, request: Request, session_id: str) -> Response:
        """Delete a session and its messages."""
        chat_session_delete(actor=actor_of(request), session_id=session_id)
        return Response(status=204)


class ChatMessageCreateApi(APIView):
    class SendSerializer(serializers.Serializer):
        message = serializers.CharField(allow_blank=True, trim_whitespace=False)
        session_id = serializers.CharField(required=False, allow_blank=True, max_length=64)
        model = _ChoiceText(
            help_text="snap (3 credits) or ponder (10 credits; 3 on the offline reader, which answers it as snap)"
        )
        reasoning_engine = _ChoiceText(help_text="rag, graph (default) or web")
        graph_scope = ScopeField()
        graph_id = serializers.CharField(required=False, allow_blank=True, max_length=64)
        dry_run = DryRunField()

    @extend_schema(
        operation_id="chat_messages_send",
        request=SendSerializer,
        parameters=[IDEMPOTENCY_KEY_HEADER],
        responses={
            201: SendOutSerializer,
            200: OpenApiResponse(description="dry_run=true: the quote (credits_needed, balance, covered)."),
            **api_errors(
                402,
                404,
                409,
                422,
                502,
                504,
                e404="session_id or graph_id is not yours to read.",
                e502="The model provider refused the request (the message names it); credits refunded.",
                e504="The model provider timed out (the message names it); credits refunded.",
            ),
        },
        summary="send_chat_message: snap 3 credits, ponder 10 (3 on the offline reader)",
        description=(
            "Retrieves evidence, asks the model and checks the answer's citations. Without session_id a "
            "session is created (titled from the message). Charged before generation; refunded if the "
            "provider fails (503/504). Send an Idempotency-Key to make retries safe; dry_run=true quotes."
        ),
    )
    def post(self, request: Request) -> Response:
        """send_chat_message: validate (nothing charged on bad input), charge, answer."""
        data = validated(self.SendSerializer, request.data, strict=True)
        actor = actor_of(request)
        plan = chat_message_prepare(
            actor=actor,
            message=data["message"],
            session_id=data.get("session_id") or None,
            model=data.get("model") or None,
            engine=data.get("reasoning_engine") or None,
            scope=data.get("graph_scope") or None,
            default_scope=request_scope(request, {}),  # a new session's; a continued one keeps its own
            graph_id=data.get("graph_id") if "graph_id" in data else None,
        )
        meter = Meter.from_request(request, endpoint=MESSAGE_ENDPOINT)
        if meter.dry_run:
            return Response(quote_out(chat_message_quote(actor=actor, plan=plan)))
        return meter.run(  # type: ignore[return-value]
            lambda key: (chat_message_send_metered(actor=actor, plan=plan, idempotency_key=key), 201)
        )


class RetrieveApi(APIView):
    class RetrieveInSerializer(serializers.Serializer):
        question = serializers.CharField(max_length=4000, help_text="what to find evidence for")
        mode = _ChoiceText(
            help_text=f"{' or '.join(SEARCH_ENGINES)} (default): passages, or the graph walk's facts too"
        )
        graph_scope = ScopeField()
        graph_id = serializers.CharField(required=False, allow_blank=True, max_length=64)
        top_k = range_field(maximum=MAX_ITEMS, default=12)

    class RetrieveOutSerializer(serializers.Serializer):
        mode = serializers.CharField()
        count = serializers.IntegerField()
        items = EvidenceOutSerializer(many=True, help_text="best first; n numbers them 1..count")

    @extend_schema(
        operation_id="retrieve",
        request=RetrieveInSerializer,
        responses={200: RetrieveOutSerializer, **api_errors(404, e404="graph_id is not yours to read.")},
        summary="Retrieve evidence without an answer (free)",
        description=(
            "The evidence chat's rag or graph engine would hand the model (passages; with graph also facts, "
            "relations and entities), each with its citation: document, page, chunk_id and view_url (the viewer at "
            "the passage, for your own documents). Free like entity search; it counts against the request limits."
        ),
    )
    def post(self, request: Request) -> Response:
        data = validated(self.RetrieveInSerializer, request.data)
        engine = data.get("mode") or "graph"
        items = evidence_search(
            actor=actor_of(request),
            question=data["question"],
            engine=engine,
            scope=request_scope(request, data),
            graph_id=data.get("graph_id") or None,
            limit=data["top_k"],
        )
        return Response({"mode": engine, "count": len(items), "items": items})
