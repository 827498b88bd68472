from django.urls import path

from exograph.documents import views

app_name = "documents"

urlpatterns = [
    path("documents/", views.document_list, name="list"),
    path("documents/<str:document_id>/", views.document_view, name="view"),
    path("documents/<str:document_id>/file/", views.document_file, name="file"),
    path("documents/<str:document_id>/<str:action>/", views.document_action, name="action"),
]
