"""REST: API keys and the current account."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from exograph.accounts.models import ApiKey
from exograph.accounts.selectors import api_key_list_for_user
from exograph.accounts.services import api_key_create, api_key_revoke
from exograph.core.api import ScopeField, actor_of, request_scope, validated
from exograph.core.schema import api_errors, results_of


class ApiKeyOutSerializer(serializers.ModelSerializer[ApiKey]):
    prefix = serializers.CharField(source="display_prefix")
    active = serializers.BooleanField(source="is_active")

    class Meta:
        model = ApiKey
        fields = ["id", "name", "prefix", "active", "created", "last_used_at", "revoked_at"]


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


class ApiKeyListCreateApi(APIView):
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100)

    @extend_schema(responses=results_of(ApiKeyOutSerializer, name="ApiKeyList"), summary="List your API keys")
    def get(self, request: Request) -> Response:
        keys = api_key_list_for_user(user=actor_of(request))
        return Response({"results": ApiKeyOutSerializer(keys, many=True).data})

    @extend_schema(
        request=InputSerializer,
        responses={201: ApiKeyCreatedSerializer, **api_errors(409, e409="Too many active keys; revoke one first.")},
        summary="Create an API key",
    )
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        issued = api_key_create(actor=actor_of(request), name=data["name"])
        body = dict(ApiKeyOutSerializer(issued.key).data)
        body["key"] = issued.secret
        return Response(body, status=201)


class ApiKeyDetailApi(APIView):
    @extend_schema(responses={204: None, **api_errors(404)}, summary="Revoke an API key")
    def delete(self, request: Request, key_id: int) -> Response:
        api_key_revoke(actor=actor_of(request), key_id=key_id)
        return Response(status=204)
