"""Bring every graph's FalkorDB store up to the current indexes (run by `make run` after migrate)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from exograph.graphs.services import graph_stores_ensure_all


class Command(BaseCommand):
    help = "Create missing indexes of every graph store (and backfill the CJK bigrams of stores made before them)."

    def handle(self, *args: Any, **options: Any) -> None:
        done, failed = graph_stores_ensure_all()
        self.stdout.write(f"Graph stores ensured: {done}; not ensured: {len(failed)} {' '.join(failed)}".rstrip())
