from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "exograph.core"
    label = "core"
