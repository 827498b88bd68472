"""The Celery app. Tasks live in each app's tasks.py and are thin wrappers over services."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_process_init
from kombu import Queue as KombuQueue

from exograph.core.broker import redis_transport_register
from exograph.core.queues import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
# The worker must survive a broker restart mid-task (exograph/core/broker.py).
redis_transport_register()

app = Celery("exograph")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_queues = [KombuQueue(q.value) for q in Queue]
app.autodiscover_tasks()


# Warm start: each worker process loads the embedding model before it takes its first task (process init runs
# before the process reports up, so the pool gives it no task until then); give that load time to finish.
app.conf.worker_proc_alive_timeout = 180.0  # Celery's default, 4 s, would kill a process still loading


@worker_process_init.connect
def _embedder_warm_at_process_init(**_: object) -> None:
    from django.conf import settings

    if not settings.EMBEDDING_WARM_START:
        return
    from exograph.graphs.embeddings import embedder_warm

    try:
        embedder_warm()
    except Exception:  # logged; the first task loads it again (or fails naming the model)
        return
