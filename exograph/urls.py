from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from billing.urls import api_urls as billing_api_urls
from exograph.accounts import api as accounts_api
from exograph.chat.urls import api_urlpatterns as chat_api
from exograph.core import views as core_views
from exograph.documents.urls import api_urlpatterns as documents_api
from exograph.graphs import api as graphs_api
from exograph.graphs import api_import as graphs_api_import
from research.urls import api_urlpatterns as research_api

api_v1 = [
    path("me/", accounts_api.MeApi.as_view(), name="me"),
    path("keys/", accounts_api.ApiKeyListCreateApi.as_view(), name="keys"),
    path("keys/<int:key_id>/", accounts_api.ApiKeyDetailApi.as_view(), name="key-detail"),
    path("graphs/", graphs_api.GraphListCreateApi.as_view(), name="graphs"),
    path("graphs/<str:graph_id>/", graphs_api.GraphDetailApi.as_view(), name="graph-detail"),
    path("graphs/<str:graph_id>/explore/", graphs_api.GraphExploreApi.as_view(), name="graph-explore"),
    path("graphs/<str:graph_id>/overview/", graphs_api.GraphOverviewApi.as_view(), name="graph-overview"),
    path("graphs/<str:graph_id>/export/", graphs_api.GraphExportApi.as_view(), name="graph-export"),
    path("graphs/<str:graph_id>/merges/", graphs_api.GraphMergesApi.as_view(), name="graph-merges"),
    path("graphs/<str:graph_id>/import/", graphs_api_import.GraphImportApi.as_view(), name="graph-import"),
    path("entities/search", graphs_api.EntitySearchApi.as_view(), name="entity-search"),
    path("world/entities/<path:entity>/", graphs_api.WorldEntityApi.as_view(), name="world-entity"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    *documents_api,
    *chat_api,
    *research_api,
    *billing_api_urls,
]

# The API reference works offline: Swagger UI and Redoc come from drf-spectacular-sidecar's files, served
# from our static files (SPECTACULAR_SETTINGS *_DIST = "SIDECAR"); no CDN. The split view serves Swagger's
# init script from our origin (no inline JS). Both widen the CSP on their page only, for what their bundles
# do at run time: inline styles (React style attributes; Redoc's styled-components) and, for Redoc, the
# blob: web worker of its search. Redoc's template is ours (templates/drf_spectacular/redoc.html): no
# web fonts, no inline script or style.
swagger_ui = csp_update({"style-src": ["'unsafe-inline'"]})(SpectacularSwaggerSplitView.as_view(url_name="api:schema"))
redoc = csp_update({"style-src": ["'unsafe-inline'"], "worker-src": ["blob:"]})(
    SpectacularRedocView.as_view(url_name="api:schema")
)

urlpatterns = [
    path("healthz", core_views.healthz, name="healthz"),
    path("readyz", core_views.readyz, name="readyz"),
    path("api/v1/", include((api_v1, "api"), namespace="api")),
    path("api/docs/", swagger_ui, name="api-docs"),
    path("api/redoc/", redoc, name="api-redoc"),
    path("admin/", admin.site.urls),
    path("graphs/", include("exograph.graphs.urls")),
    path("chat/", include("exograph.chat.web_urls")),
    path("", include("exograph.documents.web_urls")),
    path("", include("research.web_urls")),
    path("", include("billing.urls")),
    path("", include("exograph.accounts.urls")),
    path("", include("exograph.home.urls")),
]

handler403 = "exograph.core.views.permission_denied"
handler404 = "exograph.core.views.not_found"
handler500 = "exograph.core.views.server_error"
