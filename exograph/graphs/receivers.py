"""When a user row is deleted, its remaining graphs go through graph_delete first: the safety net.

Account deletion (the account page and every Django admin path: delete_model, delete_queryset and
the delete_accounts action) goes through accounts.services.account_delete, which deletes the graphs
itself, before the user row and outside its transaction (giving the account back if the graph store
is down), so this receiver then finds none and each graph is deleted once. It remains for deletes
that bypass the service (a shell, a script, a cascade): a cascade would remove the rows but leave the
FalkorDB stores behind and the account's contributions merged into the World Graph; graph_delete
un-merges and drops them. If the graph store is down, graph_delete raises 503 and the user is not deleted.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models.signals import pre_delete
from django.dispatch import receiver

from exograph.graphs.models import WORLD_GRAPH_ID, Graph


@receiver(pre_delete, sender=settings.AUTH_USER_MODEL)
def _delete_accounts_graphs(sender: type, instance: Any, **kwargs: Any) -> None:
    from exograph.graphs.services import graph_delete

    for graph_id in Graph.objects.filter(owner=instance).exclude(id=WORLD_GRAPH_ID).values_list("id", flat=True):
        graph_delete(actor=instance, graph_id=graph_id)
