"""The ledger: the only code that changes a balance.

Every change is `_post`: one conditional UPDATE of the account row
(`... SET balance = balance + n WHERE balance + n >= 0 RETURNING balance`) together with the
`CreditEntry` insert. On PostgreSQL both are one statement (a data-modifying CTE), atomic by
itself or inside the caller's transaction (as a savepoint); on SQLite they are two statements
in one transaction. The UPDATE takes the row lock, so concurrent changes of one account queue
on the row and each re-checks the condition against the committed balance: two charges can
never both spend the last credits. The entry's unique idempotency key makes each change happen
once; a duplicate insert fails and takes its UPDATE back with it.

Idempotency keys are namespaced per account and kind (``charge:<user id>:<caller's key>``),
so two accounts may use the same key.

The package by concern: posting (`_post`, keys, balance reads), spending (quotes, charges, refunds: one decision,
spend_check) and grants (grants, clamped removals, staff adjustments). Every name is importable from here.
"""

from billing.services.idempotency import idempotency_records_purge
from billing.services.ledger.grants import (
    _check_admin,
    credits_grant,
    credits_grant_admin,
    credits_grant_signup,
    credits_remove_clamped,
    credits_set_admin,
    credits_top_up_admin,
    signup_grant_key,
)
from billing.services.ledger.posting import (
    MAX_KEY_LENGTH,
    LedgerInvariantError,
    _applied,
    _check_amount,
    _check_key,
    _existing,
    _post,
    _post_postgresql,
    credit_account_for,
    credit_balance,
    ledger_key,
)
from billing.services.ledger.spending import (
    ChargeResult,
    Quote,
    Spent,
    _charge_post,
    _charge_replay,
    _insufficient,
    credits_charge,
    credits_quote,
    credits_quote_amount,
    credits_refund,
    quote_out,
    spend_check,
)

__all__ = [
    "MAX_KEY_LENGTH",
    "ChargeResult",
    "LedgerInvariantError",
    "Quote",
    "Spent",
    "_applied",
    "_charge_post",
    "_charge_replay",
    "_check_admin",
    "_check_amount",
    "_check_key",
    "_existing",
    "_insufficient",
    "_post",
    "_post_postgresql",
    "credit_account_for",
    "credit_balance",
    "credits_charge",
    "credits_grant",
    "credits_grant_admin",
    "credits_grant_signup",
    "credits_quote",
    "credits_quote_amount",
    "credits_refund",
    "credits_remove_clamped",
    "credits_set_admin",
    "credits_top_up_admin",
    "idempotency_records_purge",
    "ledger_key",
    "quote_out",
    "signup_grant_key",
    "spend_check",
]
