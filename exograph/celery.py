"""The Celery app. Tasks live in each app's tasks.py and are thin wrappers over services."""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import Celery
from celery.signals import worker_process_init

from exograph.core.broker import broker_is_amqp, redis_transport_register

logger = logging.getLogger(__name__)

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
# The worker must survive a broker restart mid-task (exograph/core/broker.py).
redis_transport_register()


class ExographCelery(Celery):  # type: ignore[misc]
    """Celery, sending sub-second countdowns to RabbitMQ as one second.

    On quorum queues Celery routes a countdown through RabbitMQ's native delayed delivery, whose routing key counts
    whole seconds: kombu 5.7 truncates 0.5 s to 0 and refuses it (ValueError: countdown must be a positive number),
    so the publish raised (research_session_requeue sends RESEARCH_INGEST_POLL_SECONDS, which may be under 1 s;
    a retry's countdown as well). Redis keeps the countdown as given."""

    def send_task(
        self,
        name: str,
        args: Any = None,
        kwargs: Any = None,
        countdown: float | None = None,
        *rest: Any,
        **options: Any,
    ) -> Any:
        if countdown is not None and 0 < countdown < 1 and broker_is_amqp(self.conf.broker_url):
            countdown = 1.0
        return super().send_task(name, args, kwargs, countdown, *rest, **options)


app = ExographCelery("exograph")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# Warm start: each worker process loads the embedding model before it takes its first task (process init runs
# before the process reports up, so the pool gives it no task until then); give that load time to finish.
app.conf.worker_proc_alive_timeout = 180.0  # Celery's default, 4 s, would kill a process still loading


@worker_process_init.connect
def _embedder_warm_at_process_init(**_: object) -> None:
    from django.conf import settings

    if not settings.EMBEDDING_WARM_START:
        return
    from exograph.documents.extraction import extraction_warm
    from exograph.graphs.embeddings import embedder_warm

    try:
        embedder_warm()
    except Exception:  # logged; the first task loads it again (or fails naming the model)
        return
    try:
        extraction_warm()  # the NER model (~50 MB): else it loads in the first extraction, inside a task's time
    except Exception:  # the first extraction loads it again, or works on its rules alone (logged there)
        logger.warning("extraction model warm-up failed", exc_info=True)
