"""Leases: no long-running work stays stuck when the process running it dies.

A runner holds a lease on the work it runs (one row per (kind, subject_id), exograph.core.models.Lease)
and the process's heartbeat thread renews it every ttl/3 seconds. A lease whose renewals stopped (the worker was
SIGKILLed, OOM-killed, its machine lost) expires ttl seconds later; the periodic sweep
(`leases_sweep_task`, every LEASE_SWEEP_SECONDS in CELERY_BEAT_SCHEDULE) then asks the kind to resume the
work (queue it again) or, after `max_recoveries` resumptions of the same work, to give up (fail it with a
reason, refund). With the defaults (ttl 30 s, sweep every 15 s) interrupted work is queued again within
45 s of its runner's death.

Using it for a new kind of work (research steps, chat generations):

1. Register the kind once at import time (e.g. in the app's services or AppConfig.ready)::

       lease_kind_register(LeaseKind(
           name="research.step",
           active=lambda subject_id: ...,      # False: the work ended another way; the lease is dropped
           resume=lambda lease: ...,           # queue the work again (lease.step says which part)
           give_up=lambda lease, reason: ...,  # fail it with this reason and refund what it charged
       ))

2. Run each piece of work inside the lease::

       try:
           with lease_hold(kind="research.step", subject_id=str(step.id), step="search") as lease:
               ...  # the work; lease.lost turns True if someone else took it over meanwhile
       except LeaseBusy:
           return  # another live runner has it: skip (this message is a duplicate)

   The work must be idempotent: a resumed run may repeat what the interrupted one did.

3. Work that ends a run by asking to run again later (a retry countdown) parks its lease for that long
   (`lease_park`), so a message lost meanwhile is resumed by the sweep too.

4. Work is recorded before it is announced: the transaction that makes work due (an upload, a retry) also
   writes its lease, unheld, with `lease_due` (it expires LEASE_STUCK_SECONDS later); a run that hands the
   work on to a next step turns its lease into the next step's with `held.hand_off(step)` (one update: there
   is no moment without a lease). Only then is the message sent; once sent, `lease_queued` gives the queue the
   kind's requeue_window. A process that dies before the message went out (a web process killed after its
   commit, a broker that died under a finishing stage) leaves an expired lease, which the sweep resumes.

5. A kind may list its orphans (`orphans`: active subjects with no lease row and no progress since a cutoff,
   such as work left by a version without leases); the sweep gives each an expired lease and resumes it.

6. Optionally let users resume at once: `lease_resume_now(...)` resumes work no live runner holds (missing,
   parked or expired lease; the document retry endpoint does this), `lease_recover(..., reset=True)` an
   expired one.

The lease is deleted when the block exits (normally or by an exception: the runner handles its own
errors). Acquiring takes over an expired lease, a lease whose holder is a dead process on this host,
and a lease left for the queue by a recovery; it raises LeaseBusy only when a live runner holds it.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from exograph.core.lease_heartbeat import _Heartbeat
from exograph.core.models import Lease

logger = logging.getLogger(__name__)

HOST = socket.gethostname()


class LeaseBusy(Exception):
    """A live runner holds the lease: this run is a duplicate and should skip the work."""


@dataclass(frozen=True)
class LeaseKind:
    """What the sweep does with an expired lease of one kind of work."""

    name: str
    active: Callable[[str], bool]
    resume: Callable[[Lease], None]
    give_up: Callable[[Lease, str], None]
    max_recoveries: int | None = None  # None: settings.LEASE_MAX_RECOVERIES
    # A resumed piece of work that has not started after this long (the queue lost it) counts as interrupted again.
    requeue_window: float = 15 * 60.0
    # (cutoff) -> [(subject_id, step)]: active work with no lease row and no progress since cutoff (optional).
    orphans: Callable[[datetime], list[tuple[str, str]]] | None = None

    @property
    def recoveries_max(self) -> int:
        return int(settings.LEASE_MAX_RECOVERIES if self.max_recoveries is None else self.max_recoveries)


_kinds: dict[str, LeaseKind] = {}


def lease_kind_register(kind: LeaseKind) -> None:
    """Register (or replace) how expired leases of kind.name are resumed or given up."""
    _kinds[kind.name] = kind


def _ttl() -> float:
    return float(settings.LEASE_TTL_SECONDS)


def _stuck_after() -> float:
    return float(settings.LEASE_STUCK_SECONDS)


def holder_name() -> str:
    """This process as a lease holder: 'host:pid'."""
    return f"{HOST}:{os.getpid()}"


def _holder_dead(holder: str) -> bool:
    """True when holder is a process of this host that no longer exists (its lease can be taken at once)."""
    host, _, pid = holder.rpartition(":")
    if host != HOST or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return _zombie(int(pid))


def _zombie(pid: int) -> bool:
    """True when the process has exited and waits to be reaped (Linux's /proc state Z or X). A worker's pool child
    killed with its parent stays a zombie until PID 1 reaps it (a second or more in a container whose PID 1 is no
    init), and signal 0 still reaches it: its lease would look held by a live runner, and a redelivered stage
    message would be dropped as a duplicate."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return False
    return bool(fields) and fields[0] in (b"Z", b"X")


@dataclass
class HeldLease:
    """A lease this process holds; `lost` turns True if a renewal found it taken over."""

    kind: str
    subject_id: str
    token: uuid.UUID
    ttl: float
    lost: bool = False
    # Set by hand_off: the step this work goes on with, and the token of the unheld lease left for it.
    next_step: str | None = None
    next_token: uuid.UUID | None = None
    next_queued: bool = False

    def hand_off(self, step: str, *, queued: bool = False) -> None:
        """On leaving lease_hold, turn this lease into the unheld lease of the next step (instead of dropping it):
        due now, resumed by the sweep unless it starts or is announced (`lease_queued`) within LEASE_STUCK_SECONDS.
        queued: the next step is as good as announced already (this process runs it next): the lease gets the
        kind's requeue_window at once, as lease_queued would give it, in the same update."""
        self.next_step = step
        self.next_queued = queued

    def renew(self) -> bool:
        """Push the expiry ttl seconds ahead; False (and lost) if the lease is no longer ours."""
        now = timezone.now()
        renewed = Lease.objects.filter(kind=self.kind, subject_id=self.subject_id, token=self.token).update(
            expires_at=now + timedelta(seconds=self.ttl), heartbeat_at=now
        )
        if not renewed:
            self.lost = True
        return bool(renewed)


def _row_ensure(*, kind: str, subject_id: str, step: str, now: datetime) -> None:
    """The lease row of (kind, subject_id), created unheld and expired if it is missing (a racing creator wins)."""
    Lease.objects.bulk_create(
        [
            Lease(
                kind=kind,
                subject_id=subject_id,
                step=step,
                holder="",
                token=uuid.uuid4(),
                expires_at=now,
                heartbeat_at=now,
            )
        ],
        ignore_conflicts=True,
    )


def lease_acquire(*, kind: str, subject_id: str, step: str = "", ttl: float | None = None) -> HeldLease:
    """Take the lease on (kind, subject_id) for this process. Raises LeaseBusy if a live runner holds it.

    Keeps the recovery count of a lease it takes over (so work that kills its runner every time is given up)."""
    ttl = _ttl() if ttl is None else ttl
    now = timezone.now()
    token = uuid.uuid4()
    taken = {"step": step, "holder": holder_name(), "token": token, "expires_at": now + timedelta(seconds=ttl)}
    # The common case in one statement: an unheld lease (due, queued, parked, or left to the queue by a recovery)
    # is taken as the locked read below takes it (issue 29 §5: three stages a document in the batch ingest).
    if Lease.objects.filter(kind=kind, subject_id=subject_id, holder="").update(**taken, heartbeat_at=now):
        return HeldLease(kind=kind, subject_id=subject_id, token=token, ttl=ttl)
    with transaction.atomic():
        _row_ensure(kind=kind, subject_id=subject_id, step=step, now=now)
        lease = Lease.objects.select_for_update().get(kind=kind, subject_id=subject_id)
        if lease.holder and lease.expires_at > now and not _holder_dead(lease.holder):
            raise LeaseBusy(f"{kind}:{subject_id} is held by {lease.holder} until {lease.expires_at.isoformat()}")
        if lease.holder and lease.expires_at <= now:
            logger.warning("lease %s:%s of %s expired; taken over", kind, subject_id, lease.holder)
        Lease.objects.filter(pk=lease.pk).update(**taken, heartbeat_at=now)
    return HeldLease(kind=kind, subject_id=subject_id, token=token, ttl=ttl)


def lease_release(held: HeldLease) -> None:
    """Drop the lease (only if it is still ours)."""
    Lease.objects.filter(kind=held.kind, subject_id=held.subject_id, token=held.token).delete()


_heartbeat = _Heartbeat()


@contextmanager
def lease_hold(*, kind: str, subject_id: str, step: str = "", ttl: float | None = None) -> Iterator[HeldLease]:
    """Hold the lease while the block runs, renewed by the process's heartbeat thread; released on exit. Raises
    LeaseBusy."""
    held = lease_acquire(kind=kind, subject_id=subject_id, step=step, ttl=ttl)
    _heartbeat.add(held)
    try:
        yield held
    finally:
        _heartbeat.drop(held)
        if held.next_step is None:
            lease_release(held)
        else:
            _hand_off(held, held.next_step)


def _due(step: str, token: uuid.UUID, *, seconds: float | None = None) -> dict[str, object]:
    """The fields of an unheld lease due at step (fresh count), resumed unless it starts within LEASE_STUCK_SECONDS
    (or `seconds`)."""
    now = timezone.now()
    expires_at = now + timedelta(seconds=_stuck_after() if seconds is None else seconds)
    return {"step": step, "holder": "", "token": token, "expires_at": expires_at, "heartbeat_at": now, "recoveries": 0}


def _requeue_window(kind: str) -> float:
    return _kinds[kind].requeue_window if kind in _kinds else _ttl()


def _hand_off(held: HeldLease, step: str) -> None:
    """One update from our held lease to the next step's unheld, due one (queued already with next_queued)."""
    token = uuid.uuid4()
    seconds = _requeue_window(held.kind) if held.next_queued else None
    moved = Lease.objects.filter(kind=held.kind, subject_id=held.subject_id, token=held.token).update(
        **_due(step, token, seconds=seconds)
    )
    held.next_token = token if moved else None


def lease_due(*, kind: str, subject_id: str, step: str) -> uuid.UUID:
    """Record (kind, subject_id) as due at step, unheld, with a fresh count: call it in the transaction that makes
    the work due, before its message is sent. Unless the work starts or `lease_queued` says its message went out
    within LEASE_STUCK_SECONDS, the sweep resumes it. Returns the lease's token (for lease_queued)."""
    token = uuid.uuid4()
    fields = _due(step, token)
    # One upsert (the row of a new subject is created, an existing one is overwritten as due): the batch ingest
    # records each of its documents as due this way (issue 29 §5).
    Lease.objects.bulk_create(
        [Lease(kind=kind, subject_id=subject_id, **fields)],
        update_conflicts=True,
        unique_fields=["kind", "subject_id"],
        update_fields=list(fields),
    )
    return token


def lease_queued(*, kind: str, subject_id: str, token: uuid.UUID | None) -> bool:
    """The message of due work (lease_due, hand_off) was sent: give the queue the kind's requeue_window to start it
    before the sweep resumes it. A no-op (False) when the work already started or moved on (the token changed)."""
    if token is None:
        return False
    window = _requeue_window(kind)
    return bool(
        Lease.objects.filter(kind=kind, subject_id=subject_id, token=token, holder="").update(
            expires_at=timezone.now() + timedelta(seconds=window)
        )
    )


def leases_queued(*, kind: str, tokens: Mapping[str, uuid.UUID]) -> int:
    """lease_queued for many subjects of one kind (subject_id -> token) in one update; returns how many it moved. A
    row matches only with its own subject's token (tokens are random: no subject holds another's)."""
    if not tokens:
        return 0
    return Lease.objects.filter(
        kind=kind, subject_id__in=list(tokens), token__in=list(tokens.values()), holder=""
    ).update(expires_at=timezone.now() + timedelta(seconds=_requeue_window(kind)))


def lease_park(*, kind: str, subject_id: str, step: str = "", seconds: float) -> None:
    """Leave the lease to the queue: work that will run again later (a Celery retry countdown, a re-run that
    waits for something) stays watched while its message waits. If it has not started within seconds + ttl
    (the message was lost with the worker that held it), the sweep resumes it like interrupted work, instead
    of the broker's visibility timeout (20 minutes) doing so. The run that starts takes the lease as usual."""
    now = timezone.now()
    with transaction.atomic():
        _row_ensure(kind=kind, subject_id=subject_id, step=step, now=now)
        Lease.objects.filter(kind=kind, subject_id=subject_id).update(
            step=step, holder="", token=uuid.uuid4(), expires_at=now + timedelta(seconds=seconds + _ttl())
        )


def lease_expired(*, kind: str, subject_id: str) -> bool:
    """True when (kind, subject_id) has a lease whose runner stopped renewing it (or a dead local holder)."""
    lease = Lease.objects.filter(kind=kind, subject_id=subject_id).first()
    if lease is None:
        return False
    return lease.expires_at <= timezone.now() or (bool(lease.holder) and _holder_dead(lease.holder))


def _claim(lease: Lease, *, reset: bool) -> Lease | None:
    """Take an expired lease for recovery (one sweeper wins); None if someone renewed or took it."""
    kind = _kinds[lease.kind]
    now = timezone.now()
    recoveries = 1 if reset else lease.recoveries + 1
    claimed = Lease.objects.filter(pk=lease.pk, token=lease.token).update(
        holder="",
        token=uuid.uuid4(),
        expires_at=now + timedelta(seconds=kind.requeue_window),
        heartbeat_at=now,
        recoveries=recoveries,
    )
    if not claimed:
        return None
    lease.refresh_from_db()
    return lease


def _recover(lease: Lease, *, reset: bool = False) -> str:
    """Resume or give up one expired lease. Returns 'resumed', 'given_up', 'dropped' or 'skipped'."""
    kind = _kinds.get(lease.kind)
    if kind is None:
        logger.error("lease %s:%s has no registered kind; left alone", lease.kind, lease.subject_id)
        return "skipped"
    if not kind.active(lease.subject_id):
        Lease.objects.filter(pk=lease.pk, token=lease.token).delete()
        return "dropped"
    interrupted_step, previous_holder = lease.step, lease.holder
    if not reset and lease.recoveries >= kind.recoveries_max:
        if not Lease.objects.filter(pk=lease.pk, token=lease.token).delete()[0]:
            return "skipped"
        reason = (
            f"Its work was interrupted {lease.recoveries + 1} times (the worker running it stopped)"
            + (f" during {interrupted_step}" if interrupted_step else "")
            + "."
        )
        logger.warning("lease %s:%s: giving up after %d recoveries", lease.kind, lease.subject_id, lease.recoveries)
        kind.give_up(lease, reason)
        return "given_up"
    claimed = _claim(lease, reset=reset)
    if claimed is None:
        return "skipped"
    try:
        kind.resume(claimed)
    except Exception:
        # The queue is down: expire it again so the next sweep tries once more.
        Lease.objects.filter(pk=claimed.pk, token=claimed.token).update(
            expires_at=timezone.now(), recoveries=max(0, claimed.recoveries - 1)
        )
        logger.exception("lease %s:%s: could not resume", lease.kind, lease.subject_id)
        return "skipped"
    logger.warning(
        "lease %s:%s (%s, held by %s) expired; resumed (recovery %d)",
        lease.kind,
        lease.subject_id,
        interrupted_step or "queued",
        previous_holder or "the queue",
        claimed.recoveries,
    )
    return "resumed"


def lease_recover(*, kind: str, subject_id: str, reset: bool = False) -> str:
    """Recover one lease now if it expired (reset=True: a user asked, the recovery count starts over).

    Returns 'resumed', 'given_up', 'dropped', 'skipped' or 'live' (not expired)."""
    lease = Lease.objects.filter(kind=kind, subject_id=subject_id).first()
    if lease is None or not lease_expired(kind=kind, subject_id=subject_id):
        return "live"
    return _recover(lease, reset=reset)


def lease_resume_now(*, kind: str, subject_id: str, step: str) -> str:
    """Resume (kind, subject_id) now unless a live runner holds its lease (a user asked: the count starts over).
    A missing lease (work that lost its record) is created at step first; a parked or expired one is recovered.

    Returns 'resumed', 'dropped', 'skipped' or 'live' (a live runner holds it)."""
    now = timezone.now()
    _row_ensure(kind=kind, subject_id=subject_id, step=step, now=now)
    lease = Lease.objects.filter(kind=kind, subject_id=subject_id).first()
    if lease is None:
        return "skipped"
    if lease.holder and lease.expires_at > now and not _holder_dead(lease.holder):
        return "live"
    return _recover(lease, reset=True)


def _orphans_adopt(now: datetime, limit: int) -> int:
    """Give every orphan of every kind (active, no lease row, no progress for LEASE_STUCK_SECONDS) an expired
    lease, so this sweep resumes it. Returns how many."""
    adopted = 0
    cutoff = now - timedelta(seconds=_stuck_after())
    for kind in list(_kinds.values()):
        if kind.orphans is None:
            continue
        try:
            found = kind.orphans(cutoff)[:limit]
        except Exception:
            logger.exception("lease kind %s: could not list its orphans", kind.name)
            continue
        for subject_id, step in found:
            _row_ensure(kind=kind.name, subject_id=subject_id, step=step, now=now)
            logger.warning(
                "lease %s:%s: active with no lease and no progress; resumed by the sweep", kind.name, subject_id
            )
            adopted += 1
    return adopted


def leases_sweep(*, limit: int = 500) -> dict[str, int]:
    """The periodic sweep: give orphaned work a lease, then recover every expired lease (at most limit per run).
    Returns counts per outcome."""
    counts: dict[str, int] = {}
    _orphans_adopt(timezone.now(), limit)
    expired = list(Lease.objects.filter(expires_at__lte=timezone.now()).order_by("expires_at")[:limit])
    for lease in expired:
        try:
            outcome = _recover(lease)
        except Exception:
            logger.exception("lease %s:%s: recovery failed", lease.kind, lease.subject_id)
            outcome = "failed"
        counts[outcome] = counts.get(outcome, 0) + 1
    return counts
