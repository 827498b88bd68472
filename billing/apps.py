from django.apps import AppConfig
from django.conf import settings


class BillingConfig(AppConfig):
    name = "billing"
    label = "billing"

    def ready(self) -> None:
        from billing import tasks  # noqa: F401  (registered here: the services send them by name)
        from exograph.core import views as health
        from exograph.core.ratelimit import ratelimit_redis_check

        # /readyz also fails when the rate-limit counters could be evicted (core imports nothing of ours).
        health.CHECKS["ratelimit_redis"] = ratelimit_redis_check
        health.NAMES["ratelimit_redis"] = "the rate limiter's Redis (reachable, with maxmemory-policy noeviction)"
        health.SERVERS["ratelimit_redis"] = lambda: str(settings.RATELIMIT_REDIS_URL)
