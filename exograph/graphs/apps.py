from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "exograph.graphs"
    label = "graphs"

    def ready(self) -> None:
        from exograph.graphs import receivers  # noqa: F401  (account deletion cleans up graph stores)
