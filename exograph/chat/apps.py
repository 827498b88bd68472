from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "exograph.chat"
    label = "chat"

    def ready(self) -> None:
        from exograph.chat import services  # noqa: F401  (registers the chat.generation lease kind)
