"""Billing use cases. Every change of a balance goes through billing.services.ledger."""

from billing.services.closing import credit_account_detach
from billing.services.earnings import earnings_pay_for_record, earnings_query_digest, earnings_record, earnings_sweep
from billing.services.holds import (
    credits_capture,
    credits_hold,
    credits_hold_refund,
    credits_hold_touch,
    credits_release,
    holds_release_stale,
)
from billing.services.ledger import (
    ChargeResult,
    Quote,
    Spent,
    credit_account_for,
    credit_balance,
    credits_charge,
    credits_grant_admin,
    credits_grant_signup,
    credits_quote,
    credits_quote_amount,
    credits_refund,
    credits_set_admin,
    credits_top_up_admin,
    idempotency_records_purge,
    quote_out,
)
from billing.services.stripe import (
    checkout_session_create,
    stripe_event_handle,
    stripe_webhook_receive,
)

__all__ = [
    "ChargeResult",
    "Quote",
    "Spent",
    "checkout_session_create",
    "credit_account_detach",
    "credit_account_for",
    "credit_balance",
    "credits_capture",
    "credits_charge",
    "credits_grant_admin",
    "credits_grant_signup",
    "credits_hold",
    "credits_hold_refund",
    "credits_hold_touch",
    "credits_quote",
    "credits_quote_amount",
    "credits_refund",
    "credits_release",
    "credits_set_admin",
    "credits_top_up_admin",
    "earnings_pay_for_record",
    "earnings_record",
    "earnings_sweep",
    "holds_release_stale",
    "idempotency_records_purge",
    "quote_out",
    "earnings_query_digest",
    "stripe_event_handle",
    "stripe_webhook_receive",
]
