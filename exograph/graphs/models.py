from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from exograph.core.falkor import StoreKey
from exograph.core.models import TimeStampedModel
from exograph.core.scope import Scope

WORLD_GRAPH_ID = "world"


def new_graph_id() -> str:
    return f"graph_{uuid.uuid4().hex}"


class GraphKind(models.TextChoices):
    DOCUMENT = "document", "Document"
    MANUAL = "manual", "Manual"
    RESEARCH = "research", "Research"
    WORLD = "world", "World"


class Graph(TimeStampedModel):
    """A knowledge graph. Its knowledge lives in one FalkorDB graph named by `store_name`."""

    id = models.CharField(primary_key=True, max_length=64, default=new_graph_id, editable=False)
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="graphs")
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.PRIVATE)
    kind = models.CharField("type", max_length=16, choices=GraphKind.choices, default=GraphKind.MANUAL)
    # The embedder whose vectors this graph holds; queries with another embedder are refused.
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    embedding_dim = models.PositiveIntegerField(null=True, blank=True)
    # The owner's default graph of its scope and kind (where uploads land unless told otherwise).
    is_default = models.BooleanField(default=False)
    # Counts of the store, refreshed after every write so listing graphs never waits on FalkorDB.
    entity_count = models.PositiveIntegerField(default=0)
    relation_count = models.PositiveIntegerField(default=0)
    document_count = models.PositiveIntegerField(default=0)
    # The FalkorDB primary holding this graph's store (a FALKORDB_PRIMARIES name; "" = the default server, or
    # FALKORDB_WORLD_PRIMARY for the World Graph). Chosen at creation (graphs/services/placement.py); changed only by
    # `manage.py graph_move`.
    store_server = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        ordering = ["-created"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="graphs_graph_owner_name_unique"),
            models.CheckConstraint(condition=Q(scope__in=Scope.values), name="graphs_graph_scope_valid"),
            models.UniqueConstraint(
                fields=["owner", "scope", "kind"],
                condition=Q(is_default=True),
                name="graphs_graph_one_default_per_scope_kind",
            ),
        ]
        indexes = [models.Index(fields=["owner", "scope"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"

    @property
    def store_name(self) -> str:
        """The FalkorDB key of this graph's store; it carries the primary the store is placed on."""
        server = self.store_server or (settings.FALKORDB_WORLD_PRIMARY if self.is_world else "")
        return StoreKey(f"exo:{self.id}", server)

    @property
    def is_world(self) -> bool:
        return self.id == WORLD_GRAPH_ID


PLATFORM_EMAIL = "platform@exograph.internal"
