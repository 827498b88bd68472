from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "exograph.graphs"
    label = "graphs"
