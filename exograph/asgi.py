"""ASGI entry point: HTTP through Django (and /mcp through the MCP bridge), WebSockets through Channels."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from exograph.mcp_hosted import hosted_mcp  # noqa: E402
from exograph.routing import websocket_urlpatterns  # noqa: E402

# Streamable HTTP at /mcp; its tools call the REST API in-process over django_asgi_app.
mcp = hosted_mcp(django_asgi_app)

application = ProtocolTypeRouter(
    {
        "http": mcp.router(django_asgi_app),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        # Starts the MCP session manager (uvicorn --lifespan on); without it the first /mcp request does.
        "lifespan": mcp.lifespan,
    }
)
