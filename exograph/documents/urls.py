from django.urls import path

from exograph.documents import api

api_urlpatterns = [
    path("documents/", api.DocumentListCreateApi.as_view(), name="documents"),
    path("documents/<str:document_id>/", api.DocumentDetailApi.as_view(), name="document-detail"),
    path("documents/<str:document_id>/cancel/", api.DocumentCancelApi.as_view(), name="document-cancel"),
    path("documents/<str:document_id>/retry/", api.DocumentRetryApi.as_view(), name="document-retry"),
]
