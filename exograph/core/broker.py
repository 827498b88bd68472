"""The Celery broker: Redis (kombu's transport, fixed below) or RabbitMQ (quorum queues, at the end of this file).

Celery's Redis transport, made to survive a broker restart while a task runs (unix socket and TCP).

kombu 5.7.0 crashes the worker when the broker dies with a task running and a BRPOP in flight
(any worker with a free pool slot, e.g. `make run`'s two processes): Celery's consumer first calls
``connection.collect()``, whose default-channel close fails on the dead BRPOP socket but still
detaches the transport (``transport.client = None``); then ``connection.close()`` closes that channel
again, which restores the unacked message through a new pool built by ``Channel._connparams`` from
``self.connection.client.hostname`` -> ``AttributeError: 'NoneType' object has no attribute
'hostname'``, not a connection error, so ``ignore_errors`` lets it kill the worker (exit 1).
Same failure in upstream kombu as https://github.com/celery/kombu/issues/970 and
https://github.com/celery/kombu/issues/582 (the transport's client cleared before a channel's restore).

The fix: each channel remembers the connection parameters it was built with, and uses them once the
transport is detached. The restore then meets the dead broker as a plain ConnectionError (ignored), the
message stays in the broker's unacked set, and the running task acks it when the broker is back.
"""

from __future__ import annotations

from typing import Any

import redis
from kombu import Exchange
from kombu import Queue as KombuQueue
from kombu import transport as kombu_transports
from kombu.transport import redis as kombu_redis

_REMEMBERED = "_exograph_connparams"


class Channel(kombu_redis.Channel):
    """A kombu Redis channel that keeps working off its own connection parameters after a detach."""

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        remembered: dict[bool, dict[str, Any]] = self.__dict__.setdefault(_REMEMBERED, {})
        if self.connection.client is None:  # the kombu Connection detached its transport (collect/close)
            if asynchronous not in remembered:
                raise redis.ConnectionError("the broker connection of this channel is already closed")
            return dict(remembered[asynchronous])
        params: dict[str, Any] = super()._connparams(asynchronous=asynchronous)
        remembered[asynchronous] = dict(params)
        return params


class Transport(kombu_redis.Transport):
    """kombu's Redis transport with the Channel above."""

    Channel = Channel


def redis_transport_register() -> None:
    """Make redis://, rediss:// and redis+socket:// broker URLs use Transport (process-wide; idempotent)."""
    path = f"{__name__}:Transport"
    for scheme in ("redis", "rediss"):
        kombu_transports.TRANSPORT_ALIASES[scheme] = path
        # Drop a class already resolved for the old alias (kombu caches by name).
        kombu_transports._transport_cache.pop(scheme, None)


# --- RabbitMQ (amqp://): the production broker option beside Redis ------------------------------------------

AMQP_SCHEMES = ("amqp", "amqps", "pyamqp")


def broker_is_amqp(broker_url: str) -> bool:
    """Whether broker_url names RabbitMQ (an amqp:// URL) rather than Redis."""
    return broker_url.split("://", 1)[0].lower() in AMQP_SCHEMES


def celery_queues(broker_url: str) -> list[KombuQueue]:
    """The project's queues (exograph.core.queues.Queue), declared for broker_url.

    Redis: plain queues (as before). RabbitMQ: durable quorum queues (replicated, at-least-once; a consumer whose
    connection dies gives its unacked messages back at once), each bound to a topic exchange of its own name:
    Celery's native delayed delivery (countdown/ETA on quorum queues, RabbitMQ's dead-letter chain of
    celery_delayed_* queues) routes a delayed message back through the queue's exchange, and skips direct ones
    (the task would then wait in the worker's memory until its ETA, holding its only prefetch slot)."""
    from exograph.core.queues import Queue

    if not broker_is_amqp(broker_url):
        return [KombuQueue(q.value) for q in Queue]
    return [
        KombuQueue(
            q.value,
            Exchange(q.value, type="topic", durable=True),
            routing_key=q.value,
            durable=True,
            queue_arguments={"x-queue-type": "quorum"},
        )
        for q in Queue
    ]


def celery_transport_options(broker_url: str, *, visibility_timeout: int) -> dict[str, Any]:
    """broker_transport_options for broker_url.

    Redis: the visibility timeout (a reserved message comes back after it; longer than the task time limit).
    RabbitMQ has no visibility timeout (an unacked message comes back when its consumer's connection closes);
    publishes wait for the broker's confirm, so a message the web process reported sent is on the quorum queue."""
    if broker_is_amqp(broker_url):
        return {"confirm_publish": True}
    return {"visibility_timeout": visibility_timeout}
