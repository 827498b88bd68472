from django.urls import path

from exograph.chat import views

app_name = "chat"

urlpatterns = [
    path("", views.chat_page, name="page"),
    path("<str:session_id>/", views.chat_page, name="session"),
    path("<str:session_id>/rename/", views.chat_session_rename_view, name="rename"),
    path("<str:session_id>/delete/", views.chat_session_delete_view, name="delete"),
]
