"""The process's lease heartbeat: one thread renews every lease this process holds (exograph/core/leases.py)."""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import TYPE_CHECKING

from django.db import connections

if TYPE_CHECKING:
    from exograph.core.leases import HeldLease

logger = logging.getLogger("exograph.core.leases")  # its warnings are the leases' own


class _Heartbeat:
    """One daemon thread per process renews every lease this process holds, each every ttl/3 seconds.

    A thread per lease_hold cost a thread start and join a hold (issue 29 §5: 9 ms a stage on 2 busy cores, three
    stages a document in the batch ingest); holds now only add and drop an entry. A renewal that finds the lease no
    longer ours drops it (its holder sees `lost`); one racing a release or a hand-off matches no row (the token
    moved on) and changes nothing. Started on first use in each process (a forked worker child starts its own)."""

    def __init__(self) -> None:
        self._pid = 0
        self._wake = threading.Condition()
        self._due: dict[int, tuple[HeldLease, float]] = {}
        self._thread: threading.Thread | None = None
        self._wakes_at = 0.0  # when the thread wakes next on its own

    def add(self, held: HeldLease) -> None:
        with self._lock():
            due = time.monotonic() + held.ttl / 3
            self._due[id(held)] = (held, due)
            if self._thread is None or not self._thread.is_alive():
                self._wakes_at = 0.0
                self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)
                self._thread.start()
            elif due < self._wakes_at:  # only then: waking the thread for nothing costs the holder a GIL switch
                self._wake.notify()

    def drop(self, held: HeldLease) -> None:
        with self._lock():
            self._due.pop(id(held), None)

    def _lock(self) -> threading.Condition:
        if self._pid != os.getpid():  # a fresh process (fork): the parent's thread and lock are not ours
            self._pid = os.getpid()
            self._wake = threading.Condition()
            self._due = {}
            self._thread = None
            self._wakes_at = 0.0
        return self._wake

    def _run(self) -> None:
        wake = self._wake
        while True:
            with wake:
                now = time.monotonic()
                ready = [held for held, at in self._due.values() if at <= now]
                if not ready:
                    self._wakes_at = min((at for _, at in self._due.values()), default=now + 60.0)
                    wake.wait(self._wakes_at - now)
                    continue
                for held in ready:
                    self._due[id(held)] = (held, now + held.ttl / 3)
            for held in ready:
                self._beat(held)
            # This thread's connections only, back to the pool between beats: held across the wait, a web
            # request's heartbeat would take a second pooled connection for the rest of the request.
            connections.close_all()

    def _beat(self, held: HeldLease) -> None:
        try:
            if not held.renew():
                with self._wake:
                    mine = self._due.pop(id(held), None) is not None
                if mine:  # still held here, and taken over by someone else: the run goes on, it says so
                    logger.warning("lease %s:%s was taken over; this run goes on", held.kind, held.subject_id)
        except Exception:  # the database is briefly down: try again at the next beat
            logger.warning("lease %s:%s: renewal failed", held.kind, held.subject_id, exc_info=True)
