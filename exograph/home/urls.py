from django.urls import path

from exograph.home import views

app_name = "home"

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
]
