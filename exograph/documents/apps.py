from django.apps import AppConfig


class DocumentsConfig(AppConfig):
    name = "exograph.documents"
    label = "documents"
