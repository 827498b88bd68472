from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "exograph.accounts"
    label = "accounts"

    def ready(self) -> None:
        from exograph.accounts import receivers, schema  # noqa: F401  (signal receivers, OpenAPI auth extensions)
