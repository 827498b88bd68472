from django.urls import path

from exograph.chat import api

api_urlpatterns = [
    path("chat/sessions/", api.ChatSessionListCreateApi.as_view(), name="chat-sessions"),
    path("chat/sessions/<str:session_id>/", api.ChatSessionDetailApi.as_view(), name="chat-session-detail"),
    path("chat/messages/", api.ChatMessageCreateApi.as_view(), name="chat-messages"),
    path("retrieve/", api.RetrieveApi.as_view(), name="retrieve"),
]
