"""The Celery app. Tasks live in each app's tasks.py and are thin wrappers over services."""

from __future__ import annotations

import os

from celery import Celery
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
