"""A chat session's evidence numbers: what a reader of the session sees is one list, [1] to [n].

A turn reserves a number for every item it hands the model (so the answer streams with its final numbers) and
numbers the items it cites in order of first citation, from the number after the session's last cited one; an item
an earlier turn cited (same kind, source and text) keeps that turn's number. The items it was handed but did not
cite are numbered after its cited ones (the response lists them in `considered`); their numbers go back to the
session when no other turn reserved after them, so the next turn continues from the last number a reader saw
([1], then [1] again, then [2]; never [1], [13], [25] for one passage cited in three turns).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.db.models import F

from exograph.chat.citations import CitationRenumbering
from exograph.chat.models import ChatRole, ChatSession
from exograph.chat.selectors import chat_message_list


def evidence_key(item: Mapping[str, Any]) -> tuple[str, str, str]:
    """What makes two evidence items the same for a reader: their kind, where they come from, their text."""
    where = item.get("chunk_id") or item.get("url") or item.get("document_id") or ""
    return str(item.get("kind") or ""), str(where), str(item.get("text") or "")


def prior_cited(session: ChatSession | None) -> dict[int, dict[str, Any]]:
    """The items earlier turns of the session cited, by their number (an uncited item's number may be reused)."""
    if session is None:
        return {}
    prior: dict[int, dict[str, Any]] = {}
    for message in chat_message_list(session=session).filter(role=ChatRole.ASSISTANT):
        cited = {int(n) for n in (message.citations or {}).get("cited") or []}
        for item in message.evidence or []:
            if int(item["n"]) in cited:
                prior[int(item["n"])] = item
    return prior


def prior_numbers(items: list[dict[str, Any]], prior: Mapping[int, Mapping[str, Any]]) -> dict[int, int]:
    """This turn's item numbers mapped to the number an earlier turn cited the same item under."""
    by_key = {evidence_key(item): n for n, item in prior.items()}
    fixed: dict[int, int] = {}
    for item in items:
        earlier = by_key.pop(evidence_key(item), None)  # popped: two items of this turn never share a number
        if earlier is not None:
            fixed[int(item["n"])] = earlier
    return fixed


def numbers_reserve(session: ChatSession | None, count: int) -> int:
    """The first of `count` numbers for this turn's items, unique within the session (atomic bump)."""
    if session is None:
        return 1
    with transaction.atomic():
        ChatSession.objects.filter(pk=session.pk).update(next_evidence_number=F("next_evidence_number") + count)
        session.refresh_from_db(fields=["next_evidence_number"])
    return session.next_evidence_number - count


def numbers_release(session: ChatSession, *, start: int, reserved: int, used: int) -> None:
    """Give back the numbers a turn reserved and did not cite, unless another turn reserved after them (the gap
    stays then: numbers are never shared by two cited items)."""
    if used < reserved:
        ChatSession.objects.filter(pk=session.pk, next_evidence_number=start + reserved).update(
            next_evidence_number=start + used
        )


def renumber(
    answer: str, items: list[dict[str, Any]], start: int, fixed: Mapping[int, int] | None = None
) -> tuple[str, list[dict[str, Any]], int]:
    """This turn's items renumbered (module docstring) and the answer's markers rewritten to match, as they were
    streamed (CitationRenumbering with the same `fixed`); also how many new numbers the cited items took. The
    items come cited first, in order of first citation, then the uncited in the order the model saw them."""
    fixed = dict(fixed or {})
    renumbering = CitationRenumbering(own=(int(item["n"]) for item in items), start=start, fixed=fixed)
    text = renumbering.whole(answer)
    used = renumbering.next_number - start
    numbers = dict(renumbering.mapping)
    following = renumbering.next_number
    for item in items:
        own = int(item["n"])
        if own not in numbers:
            if own in fixed:
                numbers[own] = fixed[own]
            else:
                numbers[own], following = following, following + 1
    by_n = {int(item["n"]): item for item in items}
    return text, [{**by_n[own], "n": number} for own, number in numbers.items()], used
