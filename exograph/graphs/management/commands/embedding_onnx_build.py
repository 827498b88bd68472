"""Build the local embedding model's ONNX export now (run by `make venv` and the Dockerfile), not at the first query."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from exograph.graphs.embeddings import LocalEmbedder


class Command(BaseCommand):
    help = "Export all-MiniLM-L6-v2 to ONNX into EMBEDDING_ONNX_DIR (once per machine; a no-op when it is there)."

    def handle(self, *args: Any, **options: Any) -> None:
        embedder = LocalEmbedder()
        embedder.load()  # loads the model, then exports (under a file lock) unless a verified export exists
        if embedder.query_runtime != "onnxruntime":
            raise CommandError("The ONNX export could not be built or loaded (see the log); queries embed with torch.")
        self.stdout.write(f"ONNX export ready: {embedder.onnx_path}")
