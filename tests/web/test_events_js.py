"""exograph.js's events socket, run under Node with a fake WebSocket: it reconnects with backoff after a drop,
sends the id of the last event it saw (?last_event_id=), and asks the page's REST catch-up only when the server's
replay could not cover the gap (issue 22 §3.2). The server side: tests/core/test_events_socket.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

SCRIPT = Path(settings.BASE_DIR) / "exograph" / "static" / "js" / "exograph.js"

HARNESS = r"""
const fs = require("fs");
const sockets = [], timers = [], log = [];
class FakeSocket {
  constructor(url) { this.url = url; this.listeners = {}; sockets.push(this); }
  addEventListener(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); }
  fire(type, event) { (this.listeners[type] || []).forEach((fn) => fn(event || {})); }
}
global.WebSocket = FakeSocket;
global.location = { protocol: "http:", host: "example.test" };
global.document = { addEventListener() {} };
global.window = global;
global.setTimeout = (fn, ms) => { timers.push({ fn, ms }); };
eval(fs.readFileSync(process.argv[2], "utf8"));
const events = window.ExoGraph.events;
events.on("document.progress", (e) => log.push("progress " + e.document.id));
events.onReconnect(() => log.push("rest catch-up"));
const send = (s, data) => s.fire("message", { data: JSON.stringify(data) });
const drop = (s) => { s.fire("close", { code: 1006 }); const t = timers.shift(); log.push("retry after " + t.ms); t.fn(); };

let s = sockets[0];
s.fire("open");
send(s, { type: "document.progress", id: "100-0", document: { id: "a" } });
drop(s);                                   // dropped: reconnect, asking for what came after 100-0
s = sockets[1];
s.fire("open");
send(s, { type: "document.progress", id: "101-0", document: { id: "b" } });   // replayed
send(s, { type: "events.replayed", count: 1, complete: true });               // all of it: no REST
drop(s);
s = sockets[2];
s.fire("open");
send(s, { type: "events.replayed", count: 0, complete: false });              // the gap was not kept
console.log(JSON.stringify({ urls: sockets.map((x) => x.url), log }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node")
def test_reconnects_with_backoff_sending_its_last_event_id_and_catches_up_from_rest_only_on_a_gap(tmp_path):
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS)
    done = subprocess.run(["node", str(harness), str(SCRIPT)], capture_output=True, text=True, timeout=30, check=True)  # noqa: S603, S607
    result = json.loads(done.stdout)
    assert result["urls"] == [
        "ws://example.test/ws/events/",
        "ws://example.test/ws/events/?last_event_id=100-0",
        "ws://example.test/ws/events/?last_event_id=101-0",
    ]
    log = result["log"]
    assert [line for line in log if not line.startswith("retry after")] == [
        "progress a",
        "progress b",
        "rest catch-up",
    ]
    delays = [float(line.split()[-1]) for line in log if line.startswith("retry after")]
    assert len(delays) == 2 and all(0 < d <= 30000 for d in delays)
