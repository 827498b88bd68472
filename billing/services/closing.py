"""Closing the ledger of a deleted account: it stays, append-only, detached from the person.

The `CreditAccount` row, its entries, holds and checkout sessions are kept (bookkeeping,
Stripe disputes); only the account's link to its user is cut, so the ledger is named by the
account's stable `anonymous_id` from then on. No entry is updated or deleted: open holds are
released and the remaining balance is closed by appending entries, as for any other change.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from billing.models import CreditAccount, EntryKind, Hold, HoldStatus
from billing.services.holds import credits_release
from billing.services.ledger import _post
from exograph.accounts.models import User
from exograph.core.errors import Conflict

logger = logging.getLogger(__name__)


def credit_account_detach(*, user: User) -> CreditAccount | None:
    """Release user's open holds, close the balance (one admin_adjust entry) and detach the ledger from user.

    Returns the detached account (None if user never had one). Raises Conflict if the balance moved meanwhile.
    """
    account = CreditAccount.objects.filter(user_id=user.pk).first()
    if account is None:
        return None
    for hold in Hold.objects.filter(account=account, status=HoldStatus.OPEN):
        credits_release(hold=hold, reason="account deleted")
    with transaction.atomic():
        locked = CreditAccount.objects.select_for_update().get(pk=account.pk)
        # A hold opened by a request still in flight when the releases above ran.
        for hold in Hold.objects.filter(account=locked, status=HoldStatus.OPEN):
            credits_release(hold=hold, reason="account deleted")
        locked.refresh_from_db()
        if locked.balance > 0:
            entry = _post(
                user=user,
                amount=-int(locked.balance),
                kind=EntryKind.ADMIN_ADJUST,
                key=f"account_closed:{locked.anonymous_id}",
                reference="account deleted: remaining credits forfeited",
            )
            if entry is None:
                raise Conflict("The balance changed while the account was being closed.", hint="Try again.")
        CreditAccount.objects.filter(pk=locked.pk).update(user=None, modified=timezone.now())
    account.refresh_from_db()
    logger.info("credit account %s detached from its deleted user", account.pk)
    return account
