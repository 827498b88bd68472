"""X-Forwarded-For counts only when a proxy is configured (FORWARDED_ALLOW_IPS; none by default, loopback included)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from exograph.core.proxies import client_ip

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "a-very-long-pw-1"


def _signup(n: int, *, peer: str, forwarded: str):  # type: ignore[no-untyped-def]
    return Client(REMOTE_ADDR=peer).post(
        "/signup/",
        {"email": f"spoof{n}@example.com", "password": PASSWORD, "password_confirm": PASSWORD},
        HTTP_X_FORWARDED_FOR=forwarded,
    )


def test_no_proxy_is_trusted_by_default_not_even_loopback(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("FORWARDED_ALLOW_IPS", "DJANGO_SETTINGS_MODULE")}
    env["EXOGRAPH_VAR_DIR"] = str(tmp_path)
    shown = subprocess.run(
        [sys.executable, "-c", "from exograph import settings; print(repr(settings.FORWARDED_ALLOW_IPS))"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == "[]"


def test_make_run_starts_uvicorn_without_proxy_headers_unless_a_proxy_is_configured():
    text = (ROOT / "scripts" / "run.py").read_text(encoding="utf-8")
    assert '"FORWARDED_ALLOW_IPS", "127.0.0.1"' not in text
    assert '"--no-proxy-headers"' in text


@pytest.mark.django_db
def test_a_local_client_cannot_pick_its_signup_bucket_with_x_forwarded_for(settings):
    # The default settings (make run: no proxy in front): the peer is the bucket, whatever it forwards.
    settings.ANON_THROTTLES = {
        **settings.ANON_THROTTLES,
        "signup": {"per_window": 2, "window_seconds": 3600, "per_day": 20},
    }
    for n in range(2):
        assert _signup(n, peer="127.0.0.1", forwarded=f"198.51.100.{n}").status_code == 302
    refused = _signup(2, peer="127.0.0.1", forwarded="198.51.100.2")
    assert refused.status_code == 429


def test_forwarded_for_counts_only_from_a_configured_proxy(settings, rf):
    settings.FORWARDED_ALLOW_IPS = []
    assert client_ip(rf.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.7")) == "127.0.0.1"
    settings.FORWARDED_ALLOW_IPS = ["127.0.0.1"]
    assert client_ip(rf.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.7")) == "198.51.100.7"
    assert client_ip(rf.get("/", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="198.51.100.7")) == "203.0.113.9"
