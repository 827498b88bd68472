"""Print a graph's merge report: entities joined from several surface forms, and names still split by type."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exograph.graphs.merges import graph_merges_report
from exograph.graphs.models import Graph


class Command(BaseCommand):
    help = "Show what entity resolution merged in a graph (forms per document) and which names are still split."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("graph_id", help="The graph id (e.g. graph_… or world).")
        parser.add_argument("--limit", type=int, default=100)
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        graph = Graph.objects.filter(id=options["graph_id"]).first()
        if graph is None:
            raise CommandError(f"No graph with id {options['graph_id']!r}.")
        report = graph_merges_report(graph=graph, limit=options["limit"])
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        self.stdout.write(f"Merged entities in graph {graph.id}: {len(report['merged'])}")
        for row in report["merged"]:
            self.stdout.write(f"  {row['name']} [{row['type']}] <- {', '.join(row['forms'])}")
        self.stdout.write(f"Names held by several nodes: {len(report['split'])}")
        for row in report["split"]:
            nodes = ", ".join(f"{n['name']} [{n['type']}] ({n['documents']} documents)" for n in row["nodes"])
            self.stdout.write(f"  {row['key']}: {nodes}")
