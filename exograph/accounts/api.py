"""REST: API keys and the current account."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from exograph.accounts.hooks import readers
from exograph.accounts.models import MAX_MONTHLY_CREDIT_CAP, ApiKey
from exograph.accounts.selectors import api_key_list_for_user
from exograph.accounts.services import UNSET, api_key_create, api_key_revoke, api_key_update
from exograph.core.api import ScopeField, actor_of, request_scope, validated
from exograph.core.schema import api_errors, results_of


class ApiKeyOutSerializer(serializers.ModelSerializer[ApiKey]):
    prefix = serializers.CharField(source="display_prefix")
    active = serializers.BooleanField(source="is_active")
    permission = serializers.ChoiceField(
        choices=["full", "read_only"], help_text="read_only: search, explore and list; every write is refused (403)."
    )
    monthly_credit_cap = serializers.IntegerField(
        allow_null=True, help_text="Credits requests with this key may spend per calendar month (UTC); null: no cap."
    )
    spent_this_month = serializers.SerializerMethodField(help_text="Credits spent with this key this month (UTC).")

    class Meta:
        model = ApiKey
        fields = [
            "id",
            "name",
            "prefix",
            "active",
            "read_only",
            "permission",
            "monthly_credit_cap",
            "spent_this_month",
            "created",
            "last_used_at",
            "revoked_at",
        ]

    def get_spent_this_month(self, key: ApiKey) -> int:
        spent: dict[int, int] | None = self.context.get("spent")
        if spent is None:
            spent = readers.key_spent_this_month(key_ids=[key.pk])
        return int(spent.get(key.pk, 0))


def _cap_field(**kwargs: object) -> serializers.IntegerField:
    return serializers.IntegerField(
        allow_null=True,
        min_value=0,
        max_value=MAX_MONTHLY_CREDIT_CAP,
        help_text="At most this many credits per calendar month (UTC) for requests with this key; null: no cap. "
        "A spend past it answers 403 key_monthly_cap_reached.",
        **kwargs,  # type: ignore[arg-type]
    )


class ApiKeyCreatedSerializer(ApiKeyOutSerializer):
    key = serializers.CharField(help_text="The secret. Shown once; store it now.")

    class Meta(ApiKeyOutSerializer.Meta):
        fields = [*ApiKeyOutSerializer.Meta.fields, "key"]


class MeOutSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    email = serializers.EmailField()
    graph_scope = serializers.CharField(help_text="The scope this request resolved to.")


class MeApi(APIView):
    class InputSerializer(serializers.Serializer):
        graph_scope = ScopeField()

    @extend_schema(
        parameters=[InputSerializer], responses=MeOutSerializer, summary="The account behind this key or session"
    )
    def get(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.query_params)
        user = actor_of(request)
        return Response({"id": user.id, "email": user.email, "graph_scope": request_scope(request, data)})


def _acting_key(request: Request) -> ApiKey | None:
    return request.auth if isinstance(request.auth, ApiKey) else None


E403_KEYS = "This request's API key is read-only (key_read_only) or capped (key_restricted): it may not manage keys."


class ApiKeyListCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100)
        read_only = serializers.BooleanField(  # type: ignore[assignment]  # a declared field, not Field.read_only
            required=False, default=False, help_text="Only search, explore and list (for agents that should not write)."
        )
        monthly_credit_cap = _cap_field(required=False, default=None)

    @extend_schema(responses=results_of(ApiKeyOutSerializer, name="ApiKeyList"), summary="List your API keys")
    def get(self, request: Request) -> Response:
        keys = list(api_key_list_for_user(user=actor_of(request)))
        spent = readers.key_spent_this_month(key_ids=[key.pk for key in keys])
        return Response({"results": ApiKeyOutSerializer(keys, many=True, context={"spent": spent}).data})

    @extend_schema(
        request=InputSerializer,
        responses={
            201: ApiKeyCreatedSerializer,
            **api_errors(403, 409, e403=E403_KEYS, e409="Too many active keys; revoke one first."),
        },
        summary="Create an API key (optionally read-only or with a monthly credit cap)",
    )
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        issued = api_key_create(
            actor=actor_of(request),
            name=data["name"],
            read_only=data["read_only"],
            monthly_credit_cap=data["monthly_credit_cap"],
            acting_key=_acting_key(request),
        )
        body = dict(ApiKeyOutSerializer(issued.key, context={"spent": {}}).data)
        body["key"] = issued.secret
        return Response(body, status=201)


class ApiKeyDetailApi(APIView):
    class UpdateSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100, required=False)
        read_only = serializers.BooleanField(  # type: ignore[assignment]  # a declared field, not Field.read_only
            required=False, help_text="true: only search, explore and list."
        )
        monthly_credit_cap = _cap_field(required=False)

    @extend_schema(
        request=UpdateSerializer,
        responses={
            200: ApiKeyOutSerializer,
            **api_errors(403, 404, 409, e403=E403_KEYS, e409="The key is revoked."),
        },
        summary="Rename a key, or change its permission or monthly credit cap (null removes the cap)",
    )
    def patch(self, request: Request, key_id: int) -> Response:
        data = validated(self.UpdateSerializer, request.data)
        key = api_key_update(
            actor=actor_of(request),
            key_id=key_id,
            name=data.get("name", UNSET),
            read_only=data.get("read_only", UNSET),
            monthly_credit_cap=data.get("monthly_credit_cap", UNSET),
            acting_key=_acting_key(request),
        )
        return Response(ApiKeyOutSerializer(key).data)

    @extend_schema(responses={204: None, **api_errors(403, 404, e403=E403_KEYS)}, summary="Revoke an API key")
    def delete(self, request: Request, key_id: int) -> Response:
        api_key_revoke(actor=actor_of(request), key_id=key_id, acting_key=_acting_key(request))
        return Response(status=204)
