"""`make run`'s process supervisor: restarts what dies with backoff, reports a crash loop, stops in order.

Our own, not honcho/circus/supervisord: honcho stops everything when one process exits (the behaviour we
replace), supervisord and circus are daemons with their own config and control socket (circus also pulls in
zmq), and none of them knows the two things this needs: the embedded FalkorDB/Redis is started and checked
by EmbeddedFalkorDB (ping, not just pid), and the Celery worker stops in two steps (warm, then cold so
acks_late work cut short goes back to the queue at once). Production runs each process under its own
manager (systemd, Kubernetes); this module is only for the embedded default.

Stopping is ordered, whoever stops it: the web process first (no new work), then celery beat, then the
worker (warm, then cold) while the broker is still up so it can ack, queue the next stage or requeue, and
the FalkorDB/Redis server last. The children do not die with the supervisor (no PR_SET_PDEATHSIG: that
would TERM them all at once, the server going first). Instead a small watchdog process, holding the read
end of a pipe from the supervisor, notices the supervisor's death (EOF without "done": SIGKILL, OOM kill)
and stops what it left in the same order, from the children registry (run_dir/children.json: name, pid,
start time, stop steps). A next start first does the same teardown of whatever is still registered (it
waits on the same lock while a watchdog is still at it), so it never starts beside a half-stopped run.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from exograph.core.embedded import EmbeddedFalkorDB


def say(message: str) -> None:
    """Print one supervisor log line (timestamped, stderr)."""
    print(f"{time.strftime('%H:%M:%S')} supervisor: {message}", file=sys.stderr, flush=True)


def describe_exit(returncode: int | None) -> str:
    """'exited with code 1' / 'was killed by SIGKILL' for a Popen returncode."""
    if returncode is None:
        return "stopped answering"
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


@dataclass(frozen=True)
class RestartPolicy:
    """Backoff between restarts and what counts as a crash loop."""

    initial_delay: float = 1.0
    max_delay: float = 30.0
    # Up this long: the next death starts again from initial_delay.
    stable_after: float = 60.0
    # This many restarts within crash_loop_window seconds is reported loudly (retrying goes on at max_delay).
    crash_loop_restarts: int = 5
    crash_loop_window: float = 120.0


@dataclass(frozen=True)
class StopStep:
    """Send signum, then wait up to seconds for the process to exit."""

    signum: signal.Signals
    seconds: float


def proc_start_ticks(pid: int) -> int | None:
    """When process pid started (clock ticks since boot, /proc/<pid>/stat), None when it is gone or a zombie.

    Together with the pid it names one process: a pid reused by another process has another start time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces and parentheses
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return int(fields[19])  # field 22 of stat: starttime


@dataclass(frozen=True)
class ChildRecord:
    """One running child as the watchdog and the next start see it."""

    name: str
    pid: int
    started: int
    steps: tuple[StopStep, ...]

    def running(self) -> bool:
        return proc_start_ticks(self.pid) == self.started


REGISTRY = "children.json"
TEARDOWN_LOCK = "teardown.lock"


def registry_write(run_dir: Path, records: Sequence[ChildRecord]) -> None:
    """Replace run_dir/children.json with records (start order), atomically."""
    data = [
        {"name": r.name, "pid": r.pid, "started": r.started, "steps": [[int(s.signum), s.seconds] for s in r.steps]}
        for r in records
    ]
    tmp = run_dir / f".{REGISTRY}.tmp"
    tmp.write_text(json.dumps(data))
    tmp.replace(run_dir / REGISTRY)


def registry_read(run_dir: Path) -> list[ChildRecord]:
    """The registered children, in start order ([] when there is no readable registry)."""
    try:
        data = json.loads((run_dir / REGISTRY).read_text())
        return [
            ChildRecord(
                name=str(item["name"]),
                pid=int(item["pid"]),
                started=int(item["started"]),
                steps=tuple(StopStep(signal.Signals(int(n)), float(sec)) for n, sec in item["steps"]),
            )
            for item in data
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _stop_record(record: ChildRecord) -> None:
    """Walk a registered (not our own) child's stop steps; SIGKILL its process group after the last."""
    for step in record.steps:
        if not record.running():
            break
        say(f"{record.name} (pid {record.pid}): {step.signum.name}, waiting up to {step.seconds:g} s")
        try:
            os.kill(record.pid, step.signum)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + step.seconds
        while record.running() and time.monotonic() < deadline:
            time.sleep(0.1)
    if record.running():
        say(f"{record.name} (pid {record.pid}) did not stop; killing it")
    if record.running() or not Path(f"/proc/{record.pid}").exists():  # never a reused pid's group
        try:
            os.killpg(record.pid, signal.SIGKILL)  # what it leaves behind (Celery pool children)
        except (ProcessLookupError, PermissionError):
            pass
    say(f"{record.name} stopped")


def teardown_leftovers(run_dir: Path, *, why: str) -> int:
    """Stop the registered children that still run, last started first (web, beat, worker, then the store), each
    by its stop steps; then forget them. One at a time (a lock): a next start waits for a watchdog at it.
    Returns how many were still running."""
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / TEARDOWN_LOCK).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        records = registry_read(run_dir)
        running = [r for r in records if r.running()]
        if running:
            names = ", ".join(f"{r.name} (pid {r.pid})" for r in reversed(running))
            say(f"{why}: stopping what it left, in order: {names}")
        for record in reversed(running):
            _stop_record(record)
        (run_dir / REGISTRY).unlink(missing_ok=True)
    return len(running)


def watchdog_main(run_dir: Path, supervisor_pid: int) -> int:
    """The watchdog: wait for the supervisor's pipe to close; without its "done" first, it died: tear down."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    said = sys.stdin.buffer.read()  # EOF when the supervisor exits or dies, whatever killed it
    if said.strip().endswith(b"done"):
        return 0
    teardown_leftovers(run_dir, why=f"the supervisor (pid {supervisor_pid}) died")
    return 0


def celery_worker_stop_steps(grace_seconds: float) -> tuple[StopStep, ...]:
    """Warm shutdown (finish the current task) for grace_seconds, then cold (cancel; acks_late work is requeued)."""
    # SIGQUIT is Celery's cold shutdown: it cancels the running tasks, and with task_acks_late +
    # task_reject_on_worker_lost their messages go straight back to the queue (not after the visibility timeout).
    # Not worker_soft_shutdown_timeout: that sleeps the whole timeout even when the task finishes early.
    return (StopStep(signal.SIGTERM, grace_seconds), StopStep(signal.SIGQUIT, 30.0))


class Service:
    """One supervised thing: started, checked for liveness, stopped."""

    name: str

    def start(self) -> None:
        raise NotImplementedError

    def alive(self) -> bool:
        raise NotImplementedError

    def exit_description(self) -> str:
        raise NotImplementedError

    def stop(self, *, hurry: Callable[[], bool]) -> None:
        raise NotImplementedError

    def record(self) -> ChildRecord | None:
        """This service's running process for the children registry, or None."""
        raise NotImplementedError


@dataclass
class ProcessService(Service):
    """A child command in its own session (Ctrl-C reaches only the supervisor), stopped by stop_steps."""

    name: str
    args: Sequence[str]
    cwd: Path
    stop_steps: Sequence[StopStep] = (StopStep(signal.SIGTERM, 15.0),)
    env: dict[str, str] | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def start(self) -> None:
        # Not die_with_parent: when the supervisor dies its watchdog stops the children in order.
        self.process = subprocess.Popen(list(self.args), cwd=self.cwd, env=self.env, start_new_session=True)  # noqa: S603

    def record(self) -> ChildRecord | None:
        started = proc_start_ticks(self.process.pid) if self.process else None
        if self.process is None or started is None:
            return None
        return ChildRecord(self.name, self.process.pid, started, tuple(self.stop_steps))

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def alive(self) -> bool:
        alive = self.process is not None and self.process.poll() is None
        if not alive:
            self._kill_group()  # what the dead process left behind (e.g. Celery pool children)
        return alive

    def exit_description(self) -> str:
        return describe_exit(self.process.returncode if self.process else None)

    def stop(self, *, hurry: Callable[[], bool]) -> None:
        """Walk stop_steps until the process exits; SIGKILL its process group after the last."""
        process = self.process
        if process is None or process.poll() is not None:
            self._kill_group()
            return
        for step in self.stop_steps:
            say(f"{self.name} (pid {process.pid}): {step.signum.name}, waiting up to {step.seconds:g} s")
            try:
                process.send_signal(step.signum)
            except ProcessLookupError:
                break
            if _wait(process, step.seconds, hurry=hurry):
                break
        else:
            say(f"{self.name} (pid {process.pid}) did not stop; killing it")
            self._kill_group()
            process.wait(timeout=10)
        self._kill_group()

    def _kill_group(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _wait(process: subprocess.Popen[bytes], seconds: float, *, hurry: Callable[[], bool]) -> bool:
    """True when process exited within seconds; returns early (False) when hurry() turns true."""
    hurried = hurry()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return True
        if hurry() and not hurried:
            say("stop requested again: skipping the rest of this wait")
            return process.poll() is not None
        time.sleep(0.1)
    return process.poll() is not None


@dataclass
class StoreService(Service):
    """The embedded FalkorDB/Redis: dead when its process exits or it stops answering pings."""

    store: EmbeddedFalkorDB
    name: str = "FalkorDB/Redis"
    ping_every: float = 2.0
    # A busy server may miss a ping; this many misses in a row (~ping_every apart) means it hangs.
    max_missed_pings: int = 5
    _missed: int = field(default=0, init=False)
    _last_ping: float = field(default=0.0, init=False)
    _hung: bool = field(default=False, init=False)

    def start(self) -> None:
        self._missed, self._hung = 0, False
        self.store.start()

    def alive(self) -> bool:
        process = self.store.process
        if process is None or process.poll() is not None:
            return False
        now = time.monotonic()
        if now - self._last_ping >= self.ping_every:
            self._last_ping = now
            self._missed = 0 if self.store.is_running() else self._missed + 1
            if self._missed >= self.max_missed_pings:
                self._hung = True
                process.kill()
                process.wait(timeout=10)
                return False
        return True

    def exit_description(self) -> str:
        if self._hung:
            return f"did not answer {self.max_missed_pings} pings in a row (killed)"
        process = self.store.process
        return describe_exit(process.returncode if process else None)

    def stop(self, *, hurry: Callable[[], bool]) -> None:
        self.store.stop(wait_seconds=30.0)

    def record(self) -> ChildRecord | None:
        process = self.store.process
        started = proc_start_ticks(process.pid) if process else None
        if process is None or started is None:
            return None
        return ChildRecord(self.name, process.pid, started, (StopStep(signal.SIGTERM, 30.0),))  # saves, exits


@dataclass
class _State:
    service: Service
    started_at: float = 0.0
    restart_at: float | None = None
    delay: float = 0.0
    restarts: deque[float] = field(default_factory=deque)
    crash_loop_reported: bool = False


class Supervisor:
    """Keep services alive until told to stop; then stop them in reverse start order."""

    def __init__(
        self, services: Sequence[Service], *, policy: RestartPolicy | None = None, run_dir: Path | None = None
    ) -> None:
        """run_dir: where the children registry lives; with it, a watchdog stops the children in order should
        this process die (make run). Without it (tests of the restart logic) no watchdog is started."""
        self.policy = policy or RestartPolicy()
        self._states = [_State(service) for service in services]
        self.run_dir = run_dir
        self._watchdog: subprocess.Popen[bytes] | None = None

    def start_all(self) -> None:
        """Start every service that does not already run, in order. Raises what a start raises."""
        try:
            for state in self._states:
                if not state.service.alive():
                    state.service.start()
                state.started_at = time.monotonic()
        finally:
            self._register()
        self._ensure_watchdog()

    def _register(self) -> None:
        if self.run_dir is None:
            return
        records = [r for r in (state.service.record() for state in self._states) if r is not None]
        registry_write(self.run_dir, records)

    def _ensure_watchdog(self) -> None:
        if self.run_dir is None or (self._watchdog is not None and self._watchdog.poll() is None):
            return
        if self._watchdog is not None:
            say(f"the watchdog {describe_exit(self._watchdog.returncode)}; starting another")
        self._watchdog = subprocess.Popen(  # noqa: S603
            [sys.executable, "-m", "exograph.core.supervisor", "watch", str(self.run_dir), str(os.getpid())],
            cwd=Path(__file__).resolve().parent.parent.parent,
            stdin=subprocess.PIPE,
            start_new_session=True,  # not reached by the terminal's Ctrl-C; outlives this process
        )

    def _release_watchdog(self) -> None:
        """After an orderly stop: tell the watchdog there is nothing left to stop, and forget the children."""
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None and watchdog.stdin is not None:
            try:
                watchdog.stdin.write(b"done\n")
                watchdog.stdin.close()
            except BrokenPipeError:
                pass
            try:
                watchdog.wait(timeout=10)
            except subprocess.TimeoutExpired:
                watchdog.kill()
        if self.run_dir is not None:
            (self.run_dir / REGISTRY).unlink(missing_ok=True)

    def watch(self, *, should_stop: Callable[[], bool], tick: float = 0.2) -> None:
        """Restart dead services with backoff until should_stop() is true."""
        while not should_stop():
            self.check_once()
            time.sleep(tick)

    def check_once(self) -> None:
        """One round: notice deaths, schedule restarts, start the ones whose delay is over."""
        now = time.monotonic()
        for state in self._states:
            if state.restart_at is None:
                if not state.service.alive():
                    self._schedule_restart(state, now)
            elif now >= state.restart_at:
                self._restart(state)
        self._ensure_watchdog()

    def stop_all(self, *, hurry: Callable[[], bool] = lambda: False) -> None:
        """Stop every service, last started first (each by its own stop steps): with make run's order the web
        first, then beat, then the worker while the broker still answers, the store last."""
        for state in reversed(self._states):
            began, running = time.monotonic(), state.service.record() is not None
            try:
                state.service.stop(hurry=hurry)
            except Exception as exc:  # noqa: BLE001 (keep stopping the others)
                say(f"stopping {state.service.name} failed: {type(exc).__name__}: {exc}")
            else:
                if running:
                    say(f"{state.service.name} stopped ({time.monotonic() - began:.1f} s)")
        self._release_watchdog()

    def _schedule_restart(self, state: _State, now: float) -> None:
        policy = self.policy
        uptime = now - state.started_at
        if uptime >= policy.stable_after:
            state.delay = 0.0
            state.crash_loop_reported = False
        state.delay = policy.initial_delay if state.delay == 0 else min(state.delay * 2, policy.max_delay)
        while state.restarts and now - state.restarts[0] > policy.crash_loop_window:
            state.restarts.popleft()
        state.restarts.append(now)
        say(
            f"{state.service.name} {state.service.exit_description()} after {uptime:.1f} s; "
            f"restarting in {state.delay:g} s ({len(state.restarts)} restarts in the last "
            f"{policy.crash_loop_window:g} s)"
        )
        if len(state.restarts) >= policy.crash_loop_restarts and not state.crash_loop_reported:
            state.crash_loop_reported = True
            state.delay = policy.max_delay
            say(
                f"ERROR: {state.service.name} keeps dying ({len(state.restarts)} times in "
                f"{policy.crash_loop_window:g} s); still retrying every {policy.max_delay:g} s. "
                "Look at its log lines above; Ctrl-C stops ExoGraph."
            )
        state.restart_at = now + state.delay

    def _restart(self, state: _State) -> None:
        state.restart_at = None
        state.started_at = time.monotonic()
        try:
            state.service.start()
        except Exception as exc:  # noqa: BLE001 (a failed start is one more death, retried with backoff)
            say(f"starting {state.service.name} failed: {type(exc).__name__}: {exc}")
            self._schedule_restart(state, time.monotonic())
            return
        self._register()
        say(f"{state.service.name} restarted")


if __name__ == "__main__":  # the watchdog: python -m exograph.core.supervisor watch RUN_DIR SUPERVISOR_PID
    if len(sys.argv) != 4 or sys.argv[1] != "watch":
        raise SystemExit("usage: python -m exograph.core.supervisor watch RUN_DIR SUPERVISOR_PID")
    raise SystemExit(watchdog_main(Path(sys.argv[2]), int(sys.argv[3])))
