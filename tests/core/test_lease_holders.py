"""A lease's holder is dead when its process is gone, or exited and not yet reaped (a zombie)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from exograph.core.leases import HOST, LeaseBusy, _holder_dead, lease_acquire, lease_release


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


@pytest.fixture
def exited_unreaped():
    """A child process that has exited and that nobody has waited for yet: a zombie (signal 0 still reaches it)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while _state(child.pid) != "Z":
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.02)
    yield child.pid
    child.wait()


def test_a_zombie_holder_is_dead_and_a_running_one_is_not(exited_unreaped):
    assert _holder_dead(f"{HOST}:{exited_unreaped}")
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not _holder_dead(f"{HOST}:{running.pid}")
        assert not _holder_dead(f"another-host:{exited_unreaped}")  # another machine's pid says nothing here
    finally:
        running.kill()
        running.wait()


@pytest.mark.django_db
def test_a_stage_takes_over_the_lease_of_a_killed_runner_not_yet_reaped(exited_unreaped):
    """A worker's pool child killed with its parent stays a zombie until PID 1 reaps it; its unexpired lease must
    not turn the redelivered stage away as a duplicate (nothing else would finish the document without beat)."""
    from exograph.core.models import Lease

    first = lease_acquire(kind="test.kind", subject_id="doc-1", ttl=60)
    Lease.objects.filter(kind="test.kind", subject_id="doc-1").update(holder=f"{HOST}:{exited_unreaped}")
    second = lease_acquire(kind="test.kind", subject_id="doc-1", ttl=60)  # no LeaseBusy: the holder runs nothing
    assert second.token != first.token
    lease_release(second)
    live = lease_acquire(kind="test.kind", subject_id="doc-2", ttl=60)
    with pytest.raises(LeaseBusy):
        lease_acquire(kind="test.kind", subject_id="doc-2", ttl=60)  # a live holder (this process) keeps it
    lease_release(live)
