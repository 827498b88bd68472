"""When an account is deleted (Django admin), its graphs go through graph_delete first.

A cascade would remove the rows but leave the FalkorDB stores behind and the account's
contributions merged into the World Graph; graph_delete un-merges and drops them.
If the graph store is down, graph_delete raises 503 and the account is not deleted.
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
