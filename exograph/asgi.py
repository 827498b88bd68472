"""ASGI entry point: HTTP through Django (and /mcp through the MCP bridge), WebSockets through Channels with session auth."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from exograph.core.middleware import (  # noqa: E402
    AccessLogMiddleware,
    RequestBodyLimitMiddleware,
    RequestGateMiddleware,
)
from exograph.graphs.embeddings import embedder_warm_in_background  # noqa: E402
from exograph.mcp_hosted import hosted_mcp  # noqa: E402
from exograph.routing import websocket_urlpatterns  # noqa: E402

# Warm start: the embedding model loads now, beside the server's start; /readyz says `warming` until it has.
if settings.EMBEDDING_WARM_START:
    embedder_warm_in_background()

# Django behind the request gate (at most REQUEST_CONCURRENCY requests inside at once; the rest wait without a
# thread or a database connection), behind the body limits (an oversized body is refused without waiting).
rest_app = RequestBodyLimitMiddleware(RequestGateMiddleware(django_asgi_app))
# Streamable HTTP at /mcp; its tools call the REST API in-process, through the same body limits and gate. The
# gate is not around /mcp itself: an MCP request waits on its inner calls, so gating both could deadlock.
mcp = hosted_mcp(rest_app)

application = ProtocolTypeRouter(
    {
        # One access-log line per request (no query strings); bodies past the endpoint's limit are
        # refused (413) before Django reads them.
        "http": AccessLogMiddleware(mcp.router(rest_app)),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        # Starts the MCP session manager (uvicorn --lifespan on); without it the first /mcp request does.
        "lifespan": mcp.lifespan,
    }
)
