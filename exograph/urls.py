from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from billing.urls import api_urls as billing_api_urls
from exograph.accounts import api as accounts_api
from exograph.chat.urls import api_urlpatterns as chat_api
from exograph.core import views as core_views
from exograph.documents.urls import api_urlpatterns as documents_api
from exograph.graphs import api as graphs_api

api_v1 = [
    path("me/", accounts_api.MeApi.as_view(), name="me"),
    path("keys/", accounts_api.ApiKeyListCreateApi.as_view(), name="keys"),
    path("keys/<int:key_id>/", accounts_api.ApiKeyDetailApi.as_view(), name="key-detail"),
    path("graphs/", graphs_api.GraphListCreateApi.as_view(), name="graphs"),
    path("graphs/<str:graph_id>/", graphs_api.GraphDetailApi.as_view(), name="graph-detail"),
    path("graphs/<str:graph_id>/explore/", graphs_api.GraphExploreApi.as_view(), name="graph-explore"),
    path("entities/search", graphs_api.EntitySearchApi.as_view(), name="entity-search"),
    path("world/entities/<path:entity>/", graphs_api.WorldEntityApi.as_view(), name="world-entity"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    *documents_api,
    *chat_api,
    *billing_api_urls,
]

# Swagger UI comes from the jsDelivr CDN (until it is served offline): its scripts, styles and images
# are allowed on this page only. The split view serves its init script from our origin (no inline JS).
_SWAGGER_CDN = "https://cdn.jsdelivr.net"
swagger_ui = csp_update(
    {"script-src": [_SWAGGER_CDN], "style-src": [_SWAGGER_CDN, "'unsafe-inline'"], "img-src": [_SWAGGER_CDN]}
)(SpectacularSwaggerSplitView.as_view(url_name="api:schema"))

urlpatterns = [
    path("healthz", core_views.healthz, name="healthz"),
    path("readyz", core_views.readyz, name="readyz"),
    path("api/v1/", include((api_v1, "api"), namespace="api")),
    path("api/docs/", swagger_ui, name="api-docs"),
    path("admin/", admin.site.urls),
    path("graphs/", include("exograph.graphs.urls")),
    path("chat/", include("exograph.chat.web_urls")),
    path("", include("exograph.documents.web_urls")),
    path("", include("billing.urls")),
    path("", include("exograph.accounts.urls")),
]

handler403 = "exograph.core.views.permission_denied"
handler404 = "exograph.core.views.not_found"
handler500 = "exograph.core.views.server_error"
