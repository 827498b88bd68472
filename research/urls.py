from django.urls import path

from research import api

api_urlpatterns = [
    path("research/", api.ResearchListCreateApi.as_view(), name="research"),
    path("research/<str:session_id>/", api.ResearchDetailApi.as_view(), name="research-detail"),
    path("research/<str:session_id>/cancel/", api.ResearchCancelApi.as_view(), name="research-cancel"),
    path("research/<str:session_id>/export/", api.ResearchExportApi.as_view(), name="research-export"),
]
