from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "exograph.graphs"
    label = "graphs"

    def ready(self) -> None:
        from exograph.core import views as health
        from exograph.graphs.embeddings import embedder_ready_check

        # /readyz is 503 `warming` until this process has loaded its embedding model (warm start).
        health.CHECKS["embeddings"] = embedder_ready_check
        health.NAMES["embeddings"] = "the embedding model"
