"""`make run`'s supervisor end to end: embedded services up, demo account usable, Ctrl-C leaves nothing behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil
import pytest
from django.conf import settings

from tests.live import free_port

EMBEDDED_ENV_VARS = ("DATABASE_URL", "REDIS_URL", "FALKORDB_URL", "DJANGO_SECRET_KEY", "CELERY_TASK_ALWAYS_EAGER")


def _wait_for(url: str, timeout: float = 90) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return httpx.get(url, timeout=2)
        except httpx.TransportError:
            time.sleep(0.5)
    raise AssertionError(f"{url} did not answer within {timeout}s")


@pytest.fixture
def run_env():
    var_dir = tempfile.mkdtemp(prefix="exo-run-", dir="/tmp")
    env = {k: v for k, v in os.environ.items() if k not in EMBEDDED_ENV_VARS}
    env.update(EXOGRAPH_VAR_DIR=var_dir, EXOGRAPH_PORT=str(free_port()))
    return env


def _start(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "scripts/run.py"],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _stop(proc: subprocess.Popen[str]) -> str:
    children = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    gone, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, f"left behind: {[p.pid for p in alive]}"
    return out


def test_run_serves_demo_account_and_stops_cleanly(run_env):
    base = f"http://127.0.0.1:{run_env['EXOGRAPH_PORT']}"
    proc = _start(run_env)
    try:
        assert _wait_for(f"{base}/login/").status_code == 200
        demo = json.loads((Path(run_env["EXOGRAPH_VAR_DIR"]) / "demo.json").read_text())
        me = httpx.get(f"{base}/api/v1/me/", headers={"Authorization": f"Bearer {demo['api_key']}"})
        assert me.status_code == 200 and me.json()["email"] == demo["email"]
        graphs = httpx.get(f"{base}/api/v1/graphs/", headers={"Authorization": f"Bearer {demo['api_key']}"})
        assert graphs.status_code == 200 and isinstance(graphs.json()["results"], list)
        assert httpx.get(f"{base}/readyz").json()["status"] == "ok"
        # The hosted MCP bridge: its session manager runs (uvicorn --lifespan on), tools reach the REST API.
        mcp_headers = {
            "Authorization": f"Bearer {demo['api_key']}",
            "Accept": "application/json, text/event-stream",
        }
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_graphs", "arguments": {}}}
        mcp = httpx.post(f"{base}/mcp", json=call, headers=mcp_headers, timeout=30)
        assert mcp.status_code == 200, mcp.text
        assert mcp.json()["result"]["content"][0]["text"].startswith("📊 Your Knowledge Graphs")
        with httpx.Client(base_url=base) as browser:
            page = browser.get("/login/")
            token = browser.cookies["csrftoken"]
            logged_in = browser.post(
                "/login/",
                data={"username": demo["email"], "password": "exograph-demo-password", "csrfmiddlewaretoken": token},
                headers={"Referer": f"{base}/login/"},
            )
            assert page.status_code == 200 and logged_in.status_code == 302
            assert browser.get("/").status_code == 200
    finally:
        out = _stop(proc)
    assert demo["api_key"] in out and "stopped." in out
    # A second run reuses the data: same account, same key still valid.
    proc = _start(run_env)
    try:
        _wait_for(f"{base}/login/")
        me = httpx.get(f"{base}/api/v1/me/", headers={"X-API-Key": demo["api_key"]})
        assert me.status_code == 200
    finally:
        _stop(proc)
