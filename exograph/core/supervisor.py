"""`make run`'s process supervisor: restarts what dies with backoff, reports a crash loop, stops in order.

Our own, not honcho/circus/supervisord: honcho stops everything when one process exits (the behaviour we
replace), supervisord and circus are daemons with their own config and control socket (circus also pulls in
zmq), and none of them knows the two things this needs: the embedded FalkorDB/Redis is started and checked
by EmbeddedFalkorDB (ping, not just pid), and the Celery worker stops in two steps (warm, then cold so
acks_late work cut short goes back to the queue at once). Production runs each process under its own
manager (systemd, Kubernetes); this module is only for the embedded default.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from exograph.core.embedded import EmbeddedFalkorDB, die_with_parent


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
        self.process = subprocess.Popen(  # noqa: S603
            list(self.args), cwd=self.cwd, env=self.env, preexec_fn=die_with_parent, start_new_session=True
        )

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
        self.store.stop()


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

    def __init__(self, services: Sequence[Service], *, policy: RestartPolicy | None = None) -> None:
        self.policy = policy or RestartPolicy()
        self._states = [_State(service) for service in services]

    def start_all(self) -> None:
        """Start every service that does not already run, in order. Raises what a start raises."""
        for state in self._states:
            if not state.service.alive():
                state.service.start()
            state.started_at = time.monotonic()

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

    def stop_all(self, *, hurry: Callable[[], bool] = lambda: False) -> None:
        """Stop every service, last started first (each by its own stop steps)."""
        for state in reversed(self._states):
            try:
                state.service.stop(hurry=hurry)
            except Exception as exc:  # noqa: BLE001 (keep stopping the others)
                say(f"stopping {state.service.name} failed: {type(exc).__name__}: {exc}")

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
        say(f"{state.service.name} restarted")
