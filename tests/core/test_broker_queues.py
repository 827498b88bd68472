"""The broker choice: Redis keeps its plain queues and visibility timeout; amqp:// gets quorum queues on topic exchanges
and confirmed publishes (tests/faults/test_rabbitmq.py runs real workers on them)."""

from __future__ import annotations

from exograph.celery import app as celery_app
from exograph.core.broker import broker_is_amqp, celery_queues, celery_transport_options
from exograph.core.queues import Queue

REDIS = "redis://127.0.0.1:6379/1"
AMQP = "amqp://guest:guest@127.0.0.1:5672/exograph"


def test_only_amqp_urls_name_rabbitmq():
    assert [broker_is_amqp(url) for url in (AMQP, "amqps://h/v", "pyamqp://h//", REDIS, "redis+socket:///x.sock")] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_redis_queues_and_options_are_as_before():
    queues = celery_queues(REDIS)
    assert [(q.name, q.exchange.name, q.exchange.type, q.queue_arguments) for q in queues] == [
        (q.value, "", "direct", None) for q in Queue
    ]
    assert celery_transport_options(REDIS, visibility_timeout=1260) == {"visibility_timeout": 1260}


def test_rabbitmq_queues_are_quorum_queues_on_topic_exchanges_with_confirmed_publishes():
    queues = celery_queues(AMQP)
    assert [(q.name, q.exchange.name, q.exchange.type, q.routing_key, q.durable) for q in queues] == [
        (q.value, q.value, "topic", q.value, True) for q in Queue
    ]
    assert all(q.queue_arguments == {"x-queue-type": "quorum"} for q in queues)
    assert celery_transport_options(AMQP, visibility_timeout=1260) == {"confirm_publish": True}


def test_the_app_keeps_the_reliability_settings_on_either_broker():
    conf = celery_app.conf
    assert (conf.task_acks_late, conf.task_reject_on_worker_lost, conf.worker_prefetch_multiplier) == (True, True, 1)
    assert conf.worker_detect_quorum_queues is True
    assert [q.name for q in conf.task_queues] == [q.value for q in Queue]
