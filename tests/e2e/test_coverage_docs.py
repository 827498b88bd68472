"""The API reference works offline: /api/docs/ (Swagger UI) and /api/redoc/ in a real browser with every
request that is not to this server aborted, under the site's Content-Security-Policy."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS, live_server_url  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _offline_page(browser, base: str):  # type: ignore[no-untyped-def]
    """A page whose requests leave only for `base`; everything else is aborted and recorded."""
    page = browser.new_page()
    outside: list[str] = []
    problems: list[str] = []
    host = urlsplit(base).netloc

    def route(request_route) -> None:  # type: ignore[no-untyped-def]
        url = request_route.request.url
        if urlsplit(url).netloc == host or url.startswith(("data:", "blob:")):
            request_route.continue_()
        else:
            outside.append(url)
            request_route.abort()

    page.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status} {r.url}"))
    return page, outside, problems


def test_swagger_ui_and_redoc_list_the_operations_with_the_network_blocked(live_server_url, tmp_path):  # noqa: F811
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page, outside, problems = _offline_page(browser, live_server_url)
            response = page.goto(f"{live_server_url}/api/docs/")
            assert response is not None and response.status == 200
            csp = response.headers.get("content-security-policy", "")
            assert "cdn.jsdelivr.net" not in csp and "script-src 'self'" in csp
            page.wait_for_selector(".opblock-summary-path", timeout=30_000)
            paths = page.locator(".opblock-summary-path").all_inner_texts()
            assert "/api/v1/documents/" in paths and "/api/v1/graphs/" in paths and "/api/v1/me/" in paths
            assert len(paths) >= 20
            page.screenshot(path=str(tmp_path / "swagger.png"), full_page=False)
            assert outside == [] and problems == [], (outside, problems)

            page, outside, problems = _offline_page(browser, live_server_url)
            response = page.goto(f"{live_server_url}/api/redoc/")
            assert response is not None and response.status == 200
            page.locator("h2", has_text="upload_document").first.wait_for(timeout=30_000)
            assert page.locator("h2", has_text="list_documents").count() >= 1
            page.screenshot(path=str(tmp_path / "redoc.png"), full_page=False)
            # Redoc's bundle hard-codes its "API docs by Redocly" footer logo on cdn.redoc.ly: the CSP blocks it
            # (so nothing leaves the machine); that one blocked image is the only message allowed.
            problems = [m for m in problems if "cdn.redoc.ly/redoc/logo-mini.svg" not in m]
            assert outside == [] and problems == [], (outside, problems)
        finally:
            browser.close()
