from django.apps import AppConfig


class BillingConfig(AppConfig):
    name = "billing"
    label = "billing"

    def ready(self) -> None:
        from billing.ratelimit import ratelimit_redis_check
        from exograph.core import views as health

        # /readyz also fails when the rate-limit counters could be evicted (core imports nothing of ours).
        health.CHECKS["ratelimit_redis"] = ratelimit_redis_check
        health.NAMES["ratelimit_redis"] = "the rate limiter's Redis (reachable, with maxmemory-policy noeviction)"
