"""Extract a graph's processed documents again with the current extractor (free; progress per document)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exograph.documents.services.reextract import ReextractResult, graph_reextract
from exograph.graphs.models import Graph


class Command(BaseCommand):
    help = (
        "Re-run entity extraction on every processed document of a graph (or of every graph with --all) and "
        "rewrite its knowledge; no credits are charged."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("graph_id", nargs="?", help="The graph id (e.g. graph_…).")
        parser.add_argument("--all", action="store_true", help="every graph that has processed documents")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["all"]:
            graphs = list(Graph.objects.filter(documents__status="processed").distinct().order_by("id"))
        elif options["graph_id"]:
            graphs = list(Graph.objects.filter(id=options["graph_id"]))
            if not graphs:
                raise CommandError(f"No graph with id {options['graph_id']!r}.")
        else:
            raise CommandError("Name a graph id or pass --all.")
        for graph in graphs:

            def report(done: int, total: int, result: ReextractResult, graph: Graph = graph) -> None:
                self.stdout.write(
                    f"graph {graph.id}: {done}/{total} document {result.document_id}: {result.chunks} chunks, "
                    f"entities {result.entities_before} -> {result.entities_after}, "
                    f"{result.relations_after} relations"
                )

            results = graph_reextract(graph=graph, progress=report)
            self.stdout.write(f"graph {graph.id}: {len(results)} documents re-extracted, 0 credits charged.")
