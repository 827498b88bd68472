from django.apps import AppConfig


class DocumentsConfig(AppConfig):
    name = "exograph.documents"
    label = "documents"

    def ready(self) -> None:
        from exograph.documents import receivers, tasks  # noqa: F401  (cascade refunds; the pipeline's tasks)
