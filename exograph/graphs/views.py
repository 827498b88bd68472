"""Web pages for graphs: the same services and selectors as the REST API."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from exograph.accounts.models import User
from exograph.core.errors import ExoGraphError, NotFound, PermissionDenied
from exograph.core.scope import Scope
from exograph.documents.selectors import document_list_for_user
from exograph.graphs.forms import GraphCreateForm, GraphRenameForm, SearchForm, WorldEntityForm
from exograph.graphs.merges import graph_merges_for_owner
from exograph.graphs.models import WORLD_GRAPH_ID
from exograph.graphs.selectors import (
    MAX_EXPLORE_HOPS,
    graph_get_for_user,
    graph_list_for_user,
    graphs_holding_knowledge_for_user,
)
from exograph.graphs.services import entities_search, graph_create, graph_delete, graph_rename, world_entity_lookup


def _user(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)  # noqa: S101 (login_required guarantees it)
    return user


@login_required
def graph_list(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    form = GraphCreateForm(request.POST or None)
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            graph = graph_create(actor=user, name=form.cleaned_data["name"], scope=Scope(form.cleaned_data["scope"]))
        except ExoGraphError as exc:
            form.add_error(None, exc.message)
            status = exc.status
        else:
            messages.success(request, f"Graph {graph.name!r} created.")
            return redirect("graphs:list")
    elif request.method == "POST":
        status = 400
    graphs = graph_list_for_user(user=user, scope=None)
    return render(request, "graphs/list.html", {"form": form, "graphs": graphs}, status=status)


@login_required
@require_POST
def graph_rename_view(request: HttpRequest, graph_id: str) -> HttpResponse:
    form = GraphRenameForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give the graph a name of at most 200 characters.")
        return redirect("graphs:list")
    try:
        graph = graph_rename(actor=_user(request), graph_id=graph_id, name=form.cleaned_data["name"])
    except NotFound as exc:
        return render(request, "404.html", {"message": exc.message}, status=404)
    except ExoGraphError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Renamed to {graph.name!r}.")
    return redirect("graphs:list")


@login_required
@require_POST
def graph_delete_view(request: HttpRequest, graph_id: str) -> HttpResponse:
    try:
        graph_delete(actor=_user(request), graph_id=graph_id)
    except NotFound as exc:
        return render(request, "404.html", {"message": exc.message}, status=404)
    except ExoGraphError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Graph deleted.")
    return redirect("graphs:list")


@login_required
def search(request: HttpRequest) -> HttpResponse:
    """Entity search. Opened without a query (the graph list's "Search" link: ?graph_id=…) it is an empty form in
    that graph's own scope, not a 400; a graph the user cannot read is a 404."""
    user = _user(request)
    graph = None
    graph_id = (request.GET.get("graph_id") or "").strip()
    if graph_id:
        try:
            graph = graph_get_for_user(user=user, graph_id=graph_id)
        except NotFound as exc:
            form = SearchForm(initial={"graph_id": graph_id})
            return render(request, "graphs/search.html", {"form": form, "hits": None, "error": exc.message}, status=404)
    form = SearchForm(request.GET) if "query" in request.GET else SearchForm(initial={"graph_id": graph_id})
    if graph is not None and not form.is_bound:
        form.fields["graph_scope"].initial = graph.scope
    hits = None
    error = None
    status = 200
    if form.is_bound and form.is_valid():
        default = graph.scope if graph is not None else getattr(request, "graph_scope", Scope.PRIVATE)
        scope = form.cleaned_data.get("graph_scope") or default
        try:
            hits = entities_search(
                actor=user,
                query=form.cleaned_data["query"],
                n_results=form.cleaned_data.get("n_results") or 10,
                graph_id=form.cleaned_data.get("graph_id") or None,
                scope=Scope(str(scope)),
            )
        except ExoGraphError as exc:
            error, status = exc.message, exc.status
    elif form.is_bound:
        status = 400
    context = {"form": form, "hits": hits, "error": error, "graph": graph}
    return render(request, "graphs/search.html", context, status=status)


@login_required
def world_entity(request: HttpRequest, entity: str | None = None) -> HttpResponse:
    if entity is None:
        form = WorldEntityForm(request.GET or None)
        if request.GET and form.is_valid():
            return redirect(reverse("graphs:world_entity", args=[form.cleaned_data["entity"]]))
        return render(request, "graphs/world_entity.html", {"form": form}, status=400 if request.GET else 200)
    evidence = request.GET.get("evidence") in ("1", "true", "on")
    try:
        view = world_entity_lookup(actor=_user(request), entity=entity, evidence=evidence)
    except NotFound as exc:
        context = {"form": WorldEntityForm(initial={"entity": entity}), "error": exc.message, **exc.extra}
        return render(request, "graphs/world_entity.html", context, status=404)
    except ExoGraphError as exc:
        context = {"form": WorldEntityForm(initial={"entity": entity}), "error": exc.message}
        return render(request, "graphs/world_entity.html", context, status=exc.status)
    context = {"form": WorldEntityForm(initial={"entity": entity}), "view": view, "evidence": evidence}
    return render(request, "graphs/world_entity.html", context)


@login_required
def explore(request: HttpRequest, graph_id: str = WORLD_GRAPH_ID) -> HttpResponse:
    """The graph explorer page (the network is drawn by static/js/explorer.js from the explore API)."""
    user = _user(request)
    try:
        graph = graph_get_for_user(user=user, graph_id=graph_id)
    except NotFound as exc:
        return render(request, "404.html", {"message": exc.message}, status=404)
    context = {
        "graph": graph,
        "graphs": graph_list_for_user(user=user, scope=None),
        "entity": request.GET.get("entity", "")[:300],
        "max_hops": range(1, MAX_EXPLORE_HOPS + 1),
        # The overview's document filter: the user's own documents in this graph.
        "documents": document_list_for_user(user=user).filter(graph=graph)[:200],
        "overview_size": size if (size := request.GET.get("size", "")) in ("150", "500", "2000") else "150",
        # An empty graph (the World Graph before anyone shares) points to the user's graphs that hold knowledge.
        "elsewhere": [] if graph.entity_count else graphs_holding_knowledge_for_user(user=user, besides=graph.id),
    }
    return render(request, "graphs/explore.html", context)


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


# Rows of each list per page of the merge report.
MERGES_PAGE = 50


@login_required
def merges(request: HttpRequest, graph_id: str) -> HttpResponse:
    """The merge report of one of the user's graphs, for review: what was joined (each document's own forms) and
    the names still held by several nodes. Another account's private graph is a 404, its shared one a 403."""
    user = _user(request)
    raw = request.GET.get("page", "1")
    page = int(raw) if raw.isdigit() and 0 < len(raw) <= 6 else 0
    if page < 1:
        message = f"page must be a whole number from 1; got {raw[:20]!r}. Open the first page (?page=1)."
        return render(request, "graphs/merges.html", {"error": message, "graph_id": graph_id}, status=400)
    try:
        report = graph_merges_for_owner(
            user=user, graph_id=graph_id, limit=MERGES_PAGE, offset=(page - 1) * MERGES_PAGE
        )
    except NotFound as exc:
        return render(request, "404.html", {"message": exc.message}, status=404)
    except PermissionDenied as exc:
        return render(request, "403.html", {"message": exc.message}, status=403)
    except ExoGraphError as exc:
        return render(request, "graphs/merges.html", {"error": exc.message, "graph_id": graph_id}, status=exc.status)
    # Each document by its name where it is one of the user's live documents (else its id is shown).
    ids = {doc["document_id"] for row in report["merged"] for doc in row["documents"]}
    uuids = [i for i in ids if _is_uuid(i)]
    names = {
        str(pk): title or filename
        for pk, title, filename in document_list_for_user(user=user)
        .filter(id__in=uuids)
        .values_list("id", "title", "filename")
    }
    for row in report["merged"]:
        for doc in row["documents"]:
            doc["name"] = names.get(doc["document_id"], "")
    more = report["more_merged"] or report["more_split"]
    context = {
        "report": report,
        "graph_id": graph_id,
        "page": page,
        "previous_page": page - 1 if page > 1 else None,
        "next_page": page + 1 if more else None,
    }
    return render(request, "graphs/merges.html", context)
