from django.apps import AppConfig


class ResearchConfig(AppConfig):
    name = "research"
    label = "research"

    def ready(self) -> None:
        from research import tasks  # noqa: F401  (the pipeline's tasks, started by name from services)
        from research.services import running  # noqa: F401  (registers the research.session lease kind)
