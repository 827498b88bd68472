from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "exograph.chat"
    label = "chat"
