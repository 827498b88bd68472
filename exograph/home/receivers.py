"""The account lifecycle's side effects in the features: accounts announces, the top layer acts (accounts imports only
core, so it cannot do these itself).

- Verified address (accounts.hooks.email_verified, inside the verifying transaction): the signup credits
  (billing.credits_grant_signup: once per account and once per address, so a second call changes nothing).
- Deleted user (pre_delete, inside the deleting transaction, whatever deletes it: accounts.services.account_delete,
  the admin, a shell), in this order:
  1. its graphs, each through graphs.graph_delete (World Graph contributions un-merged, the store dropped after
     commit); this is the one place an account's graphs are deleted. The graph store down raises 503 and rolls the
     deletion back (account_delete then gives the account back: retry);
  2. its credit account: open holds released, the balance closed, the ledger detached and kept anonymised
     (billing.credit_account_detach).
  Its keys, documents, chats and research sessions go by the cascade.
"""

from __future__ import annotations

from typing import Any

from django.db.models.signals import pre_delete
from django.dispatch import receiver

from billing.services import credit_account_detach, credits_grant_signup
from exograph.accounts.hooks import email_verified
from exograph.accounts.models import User
from exograph.graphs.models import WORLD_GRAPH_ID, Graph
from exograph.graphs.services import graph_delete


@receiver(email_verified)
def _grant_signup_credits(sender: Any, user: User, **kwargs: Any) -> None:
    credits_grant_signup(account=user)


@receiver(pre_delete, sender=User)
def _delete_graphs(sender: type[User], instance: User, **kwargs: Any) -> None:
    for graph_id in Graph.objects.filter(owner=instance).exclude(id=WORLD_GRAPH_ID).values_list("id", flat=True):
        graph_delete(actor=instance, graph_id=graph_id)


@receiver(pre_delete, sender=User)
def _close_credit_account(sender: type[User], instance: User, **kwargs: Any) -> None:
    credit_account_detach(user=instance)
