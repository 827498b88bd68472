"""Move a graph's FalkorDB store to another primary (docs/scaling.md, "Moving a graph")."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from exograph.core.errors import ExoGraphError
from exograph.core.falkor import falkordb_primaries
from exograph.graphs.services.placement import graph_store_move, placement_load


class Command(BaseCommand):
    help = (
        "Move a graph to another FalkorDB primary: its writes get a 503 meanwhile, the copy is verified before "
        "the switch. Without arguments: list the primaries and their load."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("graph_id", nargs="?", help="the graph's id (graph_... or world)")
        parser.add_argument("target", nargs="?", help="a FALKORDB_PRIMARIES name, or 'default'")
        parser.add_argument(
            "--grace", type=float, default=None, help="seconds writes under way get (default: query timeout + 1)"
        )
        parser.add_argument(
            "--keep", type=float, default=10.0, help="seconds the source keeps its copy after the switch"
        )
        parser.add_argument("--replace", action="store_true", help="overwrite a key of the same name on the target")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["graph_id"]:
            load = placement_load()
            for name in falkordb_primaries():
                entities, graphs = load.get(name, (0, 0))
                self.stdout.write(f"{name}: {graphs} graphs, {entities} entities")
            return
        if not options["target"]:
            raise CommandError("Name the target server.")
        try:
            report = graph_store_move(
                graph_id=options["graph_id"],
                target=options["target"],
                grace_seconds=options["grace"],
                keep_seconds=options["keep"],
                replace=options["replace"],
            )
        except ExoGraphError as exc:
            raise CommandError(f"{exc.code}: {exc.message}") from exc
        self.stdout.write(
            f"moved {report['graph_id']} from {report['source']} to {report['target']}: "
            f"{report['nodes']} nodes, {report['relations']} relations, {report['bytes']} bytes copied"
        )
