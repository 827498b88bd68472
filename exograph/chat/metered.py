"""Sending a chat message, paid: the one place chat decides about money.

`chat_message_quote` answers a dry run with the decision the charge takes (the model's price; billing's
`spend_check` on the API key's monthly cap, then the balance). `chat_message_send_metered` is the use case
the doors call (REST; the web chat and MCP through REST): under a `chat.generation` lease it charges the
price under the request's money key, answers (chat.services.chat_message_send: retrieve, generate, check,
store), and refunds when the answer fails. An answer the documents do not hold is refunded in the
transaction that stores it (chat_message_send); a process that dies between the charge and the stored answer
leaves its lease behind, and the lease sweep refunds the charge.
"""

from __future__ import annotations

import logging
from typing import Any

from billing.services import Quote, Spent, credit_balance, credits_charge, credits_quote, credits_refund
from exograph.accounts.models import User
from exograph.chat.services import ChatPlan, chat_generation_lease, chat_message_send
from exograph.core.errors import NotFound

logger = logging.getLogger(__name__)

MESSAGE_ENDPOINT = "chat.messages.create"


def chat_message_quote(*, actor: User, plan: ChatPlan) -> Quote:
    """What chat_message_send_metered would decide about money, without spending: the model's price, and
    whether this request may spend it (the API key's monthly cap, then the balance). Changes nothing."""
    return credits_quote(account=actor, action=plan.action)


def chat_message_send_metered(*, actor: User, plan: ChatPlan, idempotency_key: str) -> dict[str, Any]:
    """Charge the model's price once per `idempotency_key`, answer the message, and return the answer with
    `credits_charged` and `balance`. Raises InsufficientCredits (402), KeyCapReached (403) before anything
    runs; what the answer raises (provider down 503, timeout 504, graph store down) after refunding the charge."""
    with chat_generation_lease(account=actor, charge_key=idempotency_key) as lease:
        charge = credits_charge(
            account=actor, action=plan.action, idempotency_key=idempotency_key, reference="chat message"
        )
        try:
            answer = chat_message_send(
                actor=actor,
                plan=plan,
                credits_charged=charge.credits_charged,
                lease=lease,
                charge_key=idempotency_key,
            )
        except BaseException:
            _refund(actor=actor, charge_key=idempotency_key)
            raise
    if answer["usage"]["credits_refunded"]:  # the documents don't answer: refunded with the stored answer
        spent = Spent(int(answer["usage"]["credits"]), balance=credit_balance(account=actor))
    else:
        spent = Spent(charge.credits_charged, balance=charge.balance)
    return {**answer, **spent.fields()}


def _refund(*, actor: User, charge_key: str) -> None:
    try:
        credits_refund(account=actor, charge_key=charge_key, reason=f"{MESSAGE_ENDPOINT} failed")
    except NotFound:
        return  # nothing was charged under this key
    logger.info("chat message of account %s failed; its charge refunded", actor.pk)
