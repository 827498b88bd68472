"""PostgreSQL stops under a running web process: API requests are 503s naming the database (bounded time), web
pages a 503 page, /healthz still answers and /readyz names the SQL database; when PostgreSQL is back the same
web process serves again, with no restart and no request on a dead pooled connection.

The database is a private cluster of this test (initdb in a temp dir, its own port), never the machine's."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.faults.conftest import broker_urls, manage, wait_until

pytestmark = [pytest.mark.faults]

DB = "exo_fault_pg"
PASSWORD = "fault-test-password-1"  # noqa: S105 (a throwaway account in a throwaway cluster)
# An API request during the outage may wait for the pool (EXOGRAPH_DB_POOL_TIMEOUT, 10 s) before its 503.
OUTAGE_ANSWER_BOUND = 20.0


def test_postgresql_restart_requests_fail_cleanly_and_recover_without_restarting_web(
    private_postgres, throwaway_store, start_web
):
    private_postgres._run("createdb", "-h", "127.0.0.1", "-p", str(private_postgres.port), "-U", "postgres", DB)
    redis_url, broker_url = broker_urls(throwaway_store, tcp=False)
    env = {
        "DATABASE_URL": private_postgres.url(DB),
        "REDIS_URL": redis_url,
        "FALKORDB_URL": redis_url,
        "CELERY_BROKER_URL": broker_url,
        "DJANGO_SECURE_COOKIES": "0",  # plain http on loopback: the browser session's cookies must travel
    }
    manage(env, "migrate", "--noinput", "-v", "0")
    out = manage(
        env, "create_account", "--email", "pg@example.com", "--password", PASSWORD, "--credits", "50", "--api-key"
    )  # fmt: skip
    headers = {"Authorization": f"Bearer {out.strip().splitlines()[-1]}"}
    web = start_web(env)
    browser = httpx.Client(base_url=web.base, timeout=OUTAGE_ANSWER_BOUND + 10)
    browser.get("/login/")
    login = browser.post(
        "/login/",
        data={"username": "pg@example.com", "password": PASSWORD, "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        headers={"Referer": f"{web.base}/login/"},
    )
    assert login.status_code == 302, login.text[:500]
    assert browser.get("/documents/").status_code == 200

    def me() -> httpx.Response:
        return httpx.get(f"{web.base}/api/v1/me/", headers=headers, timeout=OUTAGE_ANSWER_BOUND + 10)

    assert me().status_code == 200
    for _ in range(5):  # fill the pool with connections that the restart will break
        assert me().status_code == 200

    private_postgres.stop("immediate")  # a crash, not a polite shutdown

    started = time.monotonic()
    down = me()
    assert time.monotonic() - started < OUTAGE_ANSWER_BOUND
    assert down.status_code == 503, down.text
    error = down.json()["error"]
    assert error["code"] == "database_unavailable" and "database" in error["message"]
    assert down.headers["Retry-After"] == "5" and error["unavailable"] == "database"
    page = browser.get("/documents/")  # a signed-in page: its session lives in the database
    assert page.status_code == 503 and "database" in page.text and page.headers["Retry-After"] == "5"
    assert httpx.get(f"{web.base}/healthz", timeout=5).status_code == 200
    ready = httpx.get(f"{web.base}/readyz", timeout=OUTAGE_ANSWER_BOUND + 10)
    assert ready.status_code == 503 and "SQL database" in ready.json()["error"]["message"]

    private_postgres.start()
    back_at = time.monotonic()
    wait_until(lambda: me().status_code == 200, timeout=60, what="the API answering again", interval=0.5)
    recovered_in = time.monotonic() - back_at
    logged = len(web.log())
    statuses = [me().status_code for _ in range(10)]
    assert statuses == [200] * 10  # no request lands on a connection the restart broke
    assert browser.get("/documents/").status_code == 200  # the same session, still signed in
    assert web.process.poll() is None  # the same web process
    assert "Traceback" not in web.log()[logged:], web.log()[logged:][-3000:]  # nothing failed once it was back
    print(f"PostgreSQL restarted: API answered 200 again {recovered_in:.1f} s after it was back")


def test_an_exhausted_pool_is_a_503_naming_the_database_down_or_overloaded():
    from django.db import OperationalError
    from psycopg_pool import PoolTimeout

    from exograph.core.api import database_outage

    try:
        try:
            raise PoolTimeout("couldn't get a connection after 10.00 sec")
        except PoolTimeout as inner:
            raise OperationalError(str(inner)) from inner  # how Django's wrap_database_errors raises it
    except OperationalError as exc:
        error = database_outage(exc)
    assert error is not None and error.status == 503
    assert error.code == "database_unavailable" and "down, restarting or overloaded" in error.message
    assert error.headers == {"Retry-After": "5"}
