"""exograph.asgi:application served by a real uvicorn on a free loopback port, in a thread (MCP, request gate)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Literal

import uvicorn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """The service under uvicorn in a thread; lifespan "on" as `make run` serves it (MCP's session manager)."""

    def __init__(self, *, lifespan: Literal["on", "off"] = "on") -> None:
        from exograph.asgi import application

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            application,
            host="127.0.0.1",
            port=self.port,
            lifespan=lifespan,
            log_level="warning",
            server_header=False,
            log_config=None,  # keep Django's LOGGING (redaction): uvicorn's default would replace its handlers
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="live-uvicorn", daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
