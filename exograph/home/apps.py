from django.apps import AppConfig


class HomeConfig(AppConfig):
    """The top layer: the landing page, the dashboard and the account lifecycle's side effects. It may import every
    feature; nothing imports it."""

    name = "exograph.home"
    label = "home"

    def ready(self) -> None:
        from billing.selectors import signup_grant_offered, signup_grant_received
        from billing.services.caps import key_spent_this_month
        from exograph.accounts import hooks
        from exograph.home import receivers  # noqa: F401  (signal receivers)

        # What the account pages, API and emails show of billing, without accounts importing billing.
        hooks.readers.key_spent_this_month = key_spent_this_month
        hooks.readers.signup_credits_offered = signup_grant_offered
        hooks.readers.signup_credits_received = signup_grant_received
