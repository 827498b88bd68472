"""Re-embed a graph's chunks and entities with the current embedder (after changing EMBEDDING_PROVIDER)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exograph.graphs.models import Graph
from exograph.graphs.services import graph_reembed


class Command(BaseCommand):
    help = "Re-embed every chunk and entity of a graph with the configured embedder and record it on the graph."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("graph_id", help="The graph id (e.g. graph_… or world).")
        parser.add_argument("--batch", type=int, default=256)

    def handle(self, *args: Any, **options: Any) -> None:
        graph = Graph.objects.filter(id=options["graph_id"]).first()
        if graph is None:
            raise CommandError(f"No graph with id {options['graph_id']!r}.")
        counts = graph_reembed(graph=graph, batch=options["batch"])
        self.stdout.write(
            f"Re-embedded graph {graph.id} with {graph.embedding_model} ({graph.embedding_dim} dimensions): "
            f"{counts['chunks']} chunks, {counts['entities']} entities."
        )
