from django.urls import path

from exograph.graphs import views

app_name = "graphs"

urlpatterns = [
    path("", views.graph_list, name="list"),
    path("search/", views.search, name="search"),
    path("explore/", views.explore, name="explore"),
    path("<str:graph_id>/explore/", views.explore, name="explore_graph"),
    path("<str:graph_id>/merges/", views.merges, name="merges"),
    path("world/", views.world_entity, name="world"),
    path("world/<path:entity>/", views.world_entity, name="world_entity"),
    path("<str:graph_id>/rename/", views.graph_rename_view, name="rename"),
    path("<str:graph_id>/delete/", views.graph_delete_view, name="delete"),
]
