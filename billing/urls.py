"""Billing routes: `api_urls` go under /api/v1/ (exograph/urls.py), `urlpatterns` are the web pages."""

from django.urls import path, re_path

from billing import api, views

api_urls = [
    re_path(r"^billing/balance/?$", api.BalanceApi.as_view(), name="billing-balance"),
    re_path(r"^billing/ledger/?$", api.LedgerApi.as_view(), name="billing-ledger"),
    re_path(r"^billing/packs/?$", api.PackListApi.as_view(), name="billing-packs"),
    path("billing/checkout/", api.CheckoutCreateApi.as_view(), name="billing-checkout"),
    path("billing/holds/<str:hold_id>/", api.HoldDetailApi.as_view(), name="billing-hold"),
    path("billing/webhooks/stripe/", api.StripeWebhookApi.as_view(), name="billing-stripe-webhook"),
]

app_name = "billing"

urlpatterns = [
    path("billing/", views.billing_page, name="page"),
    path("billing/checkout/", views.checkout, name="checkout"),
]
