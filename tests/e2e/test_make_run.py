"""`make run`'s supervisor end to end: embedded services up, demo account usable, Ctrl-C leaves nothing behind."""

from __future__ import annotations

import httpx
import pytest

from tests.e2e.embedded import MakeRun, embedded_env, wait_for


@pytest.fixture
def run_env() -> dict[str, str]:
    return embedded_env()


def test_run_serves_demo_account_and_stops_cleanly(run_env):
    run = MakeRun(run_env)
    base = run.base
    run.start()
    try:
        assert wait_for(f"{base}/login/").status_code == 200
        demo = run.demo()
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
        out = run.stop()
    assert demo["api_key"] in out and "stopped." in out
    # A second run reuses the data: same account, same key still valid.
    run = MakeRun(run_env)
    run.start()
    try:
        wait_for(f"{base}/login/")
        me = httpx.get(f"{base}/api/v1/me/", headers={"X-API-Key": demo["api_key"]})
        assert me.status_code == 200
    finally:
        run.stop()
