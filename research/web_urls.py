from django.urls import path

from research import views

app_name = "research"

urlpatterns = [
    path("research/", views.research_list, name="list"),
    path("research/<str:session_id>/", views.research_detail, name="detail"),
    path("research/<str:session_id>/cancel/", views.research_cancel, name="cancel"),
]
