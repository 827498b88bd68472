"""The account lifecycle as the layers above see it, without accounts importing them: accounts imports only core.

Signals (sent by accounts.services; the top layer acts on them in exograph.home.receivers):

- `email_verified(user)`: sent inside the transaction that marks the address verified, on every call (a second
  click too, so its receivers must be idempotent): the signup credits are granted there.

Deleting an account needs no signal of ours: the top layer's `pre_delete` receivers of the user (exograph.home.receivers)
delete its graphs (World Graph contributions un-merged, stores dropped) and close its credit account, inside the
deleting transaction; the rest goes by the cascade.

Readers: what the account pages, API and emails show of billing (a key's spend this month, the signup credits).
The top layer plugs billing's answers in at start (exograph.home.apps); unplugged, they answer as if nothing was
spent or granted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.dispatch import Signal

from exograph.accounts.models import User

email_verified = Signal()  # kwargs: user


def _nothing_spent(*, key_ids: Iterable[int]) -> dict[int, int]:
    return dict.fromkeys(key_ids, 0)


def _no_credits(*, user: User) -> int:
    return 0


def _not_received(*, user: User) -> bool:
    return False


@dataclass
class Readers:
    key_spent_this_month: Callable[..., dict[int, int]] = _nothing_spent  # (key_ids=) -> {key id: credits}
    signup_credits_offered: Callable[..., int] = _no_credits  # (user=) -> what verifying the address will grant
    signup_credits_received: Callable[..., bool] = _not_received  # (user=) -> the account got the signup grant


readers = Readers()
