from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "exograph.accounts"
    label = "accounts"

    def ready(self) -> None:
        from exograph.accounts import schema  # noqa: F401  (registers OpenAPI auth extensions)
