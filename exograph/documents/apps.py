from django.apps import AppConfig


class DocumentsConfig(AppConfig):
    name = "exograph.documents"
    label = "documents"

    def ready(self) -> None:
        from exograph.documents import tasks  # noqa: F401  (registers the pipeline tasks in every process)
