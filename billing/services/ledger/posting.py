"""The ledger's one way to change a balance (`_post`), its idempotency keys and its reads: see the package."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection, transaction
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.utils import timezone

from billing.models import CreditAccount, CreditEntry, EntryKind, Hold
from exograph.accounts.models import User
from exograph.core.errors import ValidationError

logger = logging.getLogger(__name__)

MAX_KEY_LENGTH = 200


def _check_key(idempotency_key: str) -> str:
    if not isinstance(idempotency_key, str) or not idempotency_key.strip():
        raise ValidationError(
            "An idempotency key is required.",
            code="invalid_idempotency_key",
            hint="Send a unique string per operation, e.g. a UUID.",
        )
    key = idempotency_key.strip()
    if len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise ValidationError(
            f"The idempotency key must be at most {MAX_KEY_LENGTH} printable characters.",
            code="invalid_idempotency_key",
            hint="Use a UUID.",
        )
    return key


def _check_amount(amount: object, *, what: str = "amount") -> int:
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise ValidationError(
            f"The {what} must be a whole number of credits greater than 0; got {amount!r}.",
            code="invalid_amount",
            hint="Send a positive whole number.",
        )
    return amount


def ledger_key(kind: str, user_id: int, key: str) -> str:
    return f"{kind}:{user_id}:{key}"


def credit_account_for(*, user: User) -> CreditAccount:
    """The account's credit balance row, created empty on first use."""
    account = CreditAccount.objects.filter(user_id=user.pk).first()
    if account is not None:
        return account
    account, _ = CreditAccount.objects.get_or_create(user_id=user.pk, defaults={"plan": settings.BILLING_DEFAULT_PLAN})
    return account


_UPDATE_SQL = (
    "UPDATE billing_creditaccount SET balance = balance + %s, held = held + %s, modified = %s "
    "WHERE user_id = %s AND balance + %s >= 0 AND held + %s >= 0 RETURNING id, balance"
)


# PostgreSQL: the conditional UPDATE and the entry INSERT are one statement (a data-modifying
# CTE), so they commit or fail together even without a transaction block, in one round trip.
_PG_POST_TEMPLATE = """
WITH acct AS (
    UPDATE billing_creditaccount
    SET balance = balance + %(amount)s, held = held + %(held)s, modified = %(now)s
    WHERE user_id = %(user)s AND balance + %(amount)s >= 0 AND held + %(held)s >= 0{commit}
    RETURNING id, balance
)
INSERT INTO billing_creditentry
    (account_id, kind, amount, balance_after, held_change, reference, idempotency_key, hold_id, counterparty_id,
     api_key_id, created)
SELECT id, %(kind)s, %(amount)s, balance, %(held)s, %(reference)s, %(key)s, %(hold)s, %(counterparty)s,
    %(api_key)s, %(now)s
FROM acct
RETURNING id, account_id, balance_after
"""
_PG_POST_SQL = _PG_POST_TEMPLATE.format(commit="")
# The same, committed without waiting for the WAL flush, in its one round trip: the opt-in
# BILLING_CHARGE_SYNC_COMMIT=0 for autocommitted charges. set_config(..., true) lasts until the end of the statement's
# own transaction, whose commit reads it (an InitPlan, evaluated once). PostgreSQL keeps the ledger consistent either
# way (the WAL is ordered; a crash can only drop the last charges committed in the final fraction of a second, never
# half of one and never a purchase or refund, which always commit synchronously). Dropped charges favour the
# customer; the default stays fully durable.
_PG_POST_SQL_ASYNC = _PG_POST_TEMPLATE.format(
    commit=" AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off'"
)


class _PreparedCursor(psycopg.Cursor[Any]):
    """A server-side binding cursor whose statements are prepared on their connection at once: PostgreSQL plans the
    ledger's statement once per pooled connection instead of on every charge, and its parameters travel apart from
    the text. Off with the connection's prepare_threshold None (settings: EXOGRAPH_DB_PREPARED_STATEMENTS=0)."""

    def execute(
        self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
    ) -> Any:
        return super().execute(query, params, prepare=True, binary=binary)


class _PreparedDebugWrapper(CursorDebugWrapper):
    """Query logging (DEBUG, CaptureQueriesContext) of a prepared statement: the text as sent and its parameters
    (a prepared statement has no merged text for Django's last_executed_query to read)."""

    def execute(self, sql: Any, params: Any = None) -> Any:
        with self.debug_sql(sql, params):
            return CursorWrapper.execute(self, sql, params)


def _prepared_cursor() -> CursorWrapper:
    """Django's cursor wrapper (execute_wrappers, database error translation, query logging) over a _PreparedCursor
    on the current connection, inside whatever transaction it is in."""
    connection.ensure_connection()
    raw = _PreparedCursor(connection.connection)
    return _PreparedDebugWrapper(raw, connection) if connection.queries_logged else CursorWrapper(raw, connection)


def _post_postgresql(params: dict[str, Any], *, async_commit: bool) -> tuple[int, int, int] | None:
    def execute(sql: str) -> tuple[int, int, int] | None:
        with _prepared_cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone()  # type: ignore[no-any-return]

    if not connection.in_atomic_block:
        # one autocommitted statement, atomic by itself (and committed without waiting when async_commit)
        return execute(_PG_POST_SQL_ASYNC if async_commit else _PG_POST_SQL)
    with transaction.atomic():  # a savepoint inside the caller's transaction
        return execute(_PG_POST_SQL)


def _post(
    *,
    user: User,
    amount: int,
    kind: str,
    key: str,
    reference: str = "",
    held_change: int = 0,
    hold: Hold | None = None,
    counterparty: User | None = None,
    api_key_id: int | None = None,
) -> CreditEntry | None:
    """Change the balance and write its entry atomically. None if the balance (or held) would go negative.

    api_key_id: the API key the spend is counted against (billing.services.caps).

    Raises IntegrityError (after rolling this change back) if the key was already used.
    """
    now = timezone.now()
    reference = reference[:500]
    fields = {
        "kind": kind,
        "amount": amount,
        "held_change": held_change,
        "reference": reference,
        "idempotency_key": key,
        "hold": hold,
        "counterparty": counterparty,
        "api_key_id": api_key_id,
    }
    if connection.vendor == "postgresql":
        async_commit = not connection.in_atomic_block and kind == EntryKind.CHARGE
        async_commit = async_commit and not settings.BILLING_CHARGE_SYNC_COMMIT
        params: dict[str, Any] = {
            "amount": amount, "held": held_change, "now": now, "user": user.pk, "kind": kind,
            "reference": reference, "key": key, "hold": hold.pk if hold else None,
            "counterparty": counterparty.pk if counterparty else None, "api_key": api_key_id,
        }  # fmt: skip
        for _ in range(2):
            row = _post_postgresql(params, async_commit=async_commit)
            if row is not None:
                entry = CreditEntry(id=row[0], account_id=row[1], balance_after=row[2], created=now, **fields)
                entry._state.adding = False
                entry._state.db = connection.alias
                return entry
            if CreditAccount.objects.filter(user_id=user.pk).exists():
                return None
            credit_account_for(user=user)
        return None  # pragma: no cover - the account exists after the first pass
    with transaction.atomic():
        for _ in range(2):
            with connection.cursor() as cursor:
                cursor.execute(_UPDATE_SQL, [amount, held_change, now, user.pk, amount, held_change])
                found = cursor.fetchone()
            if found is not None:
                return CreditEntry.objects.create(account_id=found[0], balance_after=found[1], **fields)
            if CreditAccount.objects.filter(user_id=user.pk).exists():
                return None
            credit_account_for(user=user)
        return None  # pragma: no cover


class LedgerInvariantError(RuntimeError):
    """A change the ledger's own rules guarantee did not apply: a bug or a hand-edited row, never user error."""


def _applied(entry: CreditEntry | None, *, what: str, user: User) -> CreditEntry:
    """The entry of a change that must apply. Raises LedgerInvariantError (not `assert`: python -O strips it)."""
    if entry is None:
        logger.error("ledger invariant broken: %s did not apply on account of user %s", what, user.pk)
        raise LedgerInvariantError(f"The ledger refused a {what} that its rules guarantee; nothing was changed.")
    return entry


def _existing(key: str) -> CreditEntry | None:
    return CreditEntry.objects.filter(idempotency_key=key).first()


def credit_balance(*, account: User) -> int:
    """The spendable credits of an account (0 before its first entry)."""
    value = CreditAccount.objects.filter(user_id=account.pk).values_list("balance", flat=True).first()
    return int(value or 0)
