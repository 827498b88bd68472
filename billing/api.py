"""REST: balance, ledger, packs, checkout, holds and the Stripe webhook."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.metering import parse_idempotency_key
from billing.models import CreditEntry, Hold
from billing.selectors import credit_summary_for_user, hold_get_for_user, ledger_list_for_user, pack_list
from billing.services import checkout_session_create, stripe_webhook_receive
from exograph.core.api import Pagination, actor_of, validated
from exograph.core.schema import api_errors, results_of


class CreditEntryOutSerializer(serializers.ModelSerializer[CreditEntry]):
    class Meta:
        model = CreditEntry
        fields = ["id", "kind", "amount", "balance_after", "held_change", "reference", "created"]


class HoldOutSerializer(serializers.ModelSerializer[Hold]):
    remaining = serializers.IntegerField()

    class Meta:
        model = Hold
        fields = ["id", "amount", "captured", "released", "remaining", "status", "reference", "created"]


class BalanceOutSerializer(serializers.Serializer):
    balance = serializers.IntegerField(help_text="Spendable credits.")
    held = serializers.IntegerField(help_text="Credits reserved by running research sessions.")
    plan = serializers.CharField()
    rate_limits = serializers.DictField(child=serializers.IntegerField())
    purchases_enabled = serializers.BooleanField()


class PackOutSerializer(serializers.Serializer):
    id = serializers.CharField()
    credits = serializers.IntegerField()
    price = serializers.IntegerField(help_text="In the currency's smallest unit (cents).")
    currency = serializers.CharField()


class BalanceApi(APIView):
    @extend_schema(responses=BalanceOutSerializer, summary="Your credit balance")
    def get(self, request: Request) -> Response:
        return Response(credit_summary_for_user(actor=actor_of(request)))


class LedgerApi(APIView):
    pagination_class = Pagination  # documents GET as the paginated object it returns (limit/offset)

    @extend_schema(responses=CreditEntryOutSerializer(many=True), summary="Your credit history, newest first (paged)")
    def get(self, request: Request) -> Response:
        paginator = Pagination()
        page = paginator.paginate_queryset(ledger_list_for_user(actor=actor_of(request)), request, view=self)
        return paginator.get_paginated_response(CreditEntryOutSerializer(page, many=True).data)


class PackListApi(APIView):
    @extend_schema(responses=results_of(PackOutSerializer, name="PackList"), summary="Credit packs for sale")
    def get(self, request: Request) -> Response:
        return Response({"results": pack_list()})


class CheckoutInputSerializer(serializers.Serializer):
    pack = serializers.CharField(max_length=64, help_text="A pack id from GET /api/v1/billing/packs.")


class CheckoutOutSerializer(serializers.Serializer):
    checkout_url = serializers.URLField(help_text="Send the buyer here (Stripe Checkout).")
    session_id = serializers.CharField()
    pack = serializers.CharField()
    credits = serializers.IntegerField()


class CheckoutCreateApi(APIView):
    @extend_schema(
        request=CheckoutInputSerializer,
        responses={
            201: CheckoutOutSerializer,
            **api_errors(
                503,
                e503="Purchases are disabled (Stripe is not configured: credits are granted by an admin), "
                "or Stripe is unreachable.",
            ),
            **api_errors(400, 502, e400="Unknown pack (the hint lists the packs)."),
        },
        summary="Start a Stripe Checkout for a credit pack",
    )
    def post(self, request: Request) -> Response:
        data = validated(CheckoutInputSerializer, request.data)
        session = checkout_session_create(
            actor=actor_of(request), pack=data["pack"], idempotency_key=parse_idempotency_key(request)
        )
        return Response(
            {"checkout_url": session.url, "session_id": session.stripe_session_id, "pack": session.pack,
             "credits": session.credits},
            status=201,
        )  # fmt: skip


class HoldDetailApi(APIView):
    @extend_schema(responses={200: HoldOutSerializer, **api_errors(404)}, summary="One of your credit holds")
    def get(self, request: Request, hold_id: str) -> Response:
        return Response(HoldOutSerializer(hold_get_for_user(actor=actor_of(request), hold_id=hold_id)).data)


class StripeWebhookApi(APIView):
    """Stripe calls this; the signature is the authentication. Not rate-limited per account."""

    authentication_classes = []  # type: ignore[var-annotated]
    permission_classes = [AllowAny]
    throttle_classes = []  # type: ignore[var-annotated]

    @extend_schema(exclude=True)
    def post(self, request: Request) -> Response:
        event = stripe_webhook_receive(payload=request.body, signature=request.headers.get("Stripe-Signature"))
        return Response({"received": True, "id": event.stripe_event_id, "status": event.status})
