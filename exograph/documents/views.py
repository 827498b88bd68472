"""Web pages: upload documents (drag and drop) and watch them progress live (WebSocket /ws/events/)."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET, require_POST

from billing.web import FormTokenField, metered_form_run
from exograph.accounts.models import User
from exograph.core.errors import ExoGraphError, NotFound
from exograph.core.scope import Scope
from exograph.core.templatetags.exograph_ui import scope_word
from exograph.documents.models import Document, DocumentType
from exograph.documents.selectors import (
    document_get_for_user,
    document_has_original,
    document_list_for_user,
    document_original_get_for_user,
)
from exograph.documents.serializers import document_out
from exograph.documents.services import (
    document_cancel,
    document_delete,
    document_retry,
    document_upload,
    document_upload_prepare,
    document_upload_quote,
)
from exograph.documents.validation import ACCEPTED_LABEL, EXTENSIONS, size_check, upload_validate
from exograph.documents.web_stash import stash_drop, stash_get, stash_put
from exograph.graphs.models import Graph, GraphKind
from exograph.graphs.selectors import document_contents_read, graph_list_for_user

WEB_UPLOAD_ENDPOINT = "documents.upload.web"


class UploadForm(forms.Form):
    """Two steps: the file (and target graph) first, answered by a quote; then Confirm posts `stash` (the kept
    file, see web_stash) with the same form token, and only that uploads and charges."""

    # An empty file reaches the upload's own check (empty_file, as REST answers), not Django's "submitted file is empty".
    file = forms.FileField(required=False, allow_empty_file=True)
    graph_id = forms.ChoiceField(required=False, label="Graph")
    graph_scope = forms.ChoiceField(choices=Scope.choices, initial=Scope.PRIVATE)
    stash = forms.CharField(required=False, max_length=32, widget=forms.HiddenInput)
    form_token = FormTokenField()  # a double submit of this form uploads and charges once

    def __init__(self, *args: Any, graphs: list[Graph], default_graph_id: str = "", **kwargs: Any) -> None:
        """graphs: the user's own graphs (the picker); default_graph_id: preselected (their default graph)."""
        super().__init__(*args, **kwargs)
        field = self.fields["graph_id"]
        assert isinstance(field, forms.ChoiceField)  # noqa: S101
        field.choices = [("", "A new default graph of the scope below")] + [
            (g.id, f"{g.name} ({scope_word(g.scope)})") for g in graphs
        ]
        field.initial = default_graph_id

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not data.get("file") and not data.get("stash") and "file" not in self.errors:
            self.add_error("file", "Choose a file to upload.")
        return data


def _upload_graphs(user: User) -> tuple[list[Graph], str]:
    """The user's own graphs for the picker, and the one to preselect: their default private document graph (else
    their first own graph; none: the picker's 'new default graph')."""
    graphs = [g for g in graph_list_for_user(user=user, scope=None) if g.owner_id == user.pk]
    default = next(
        (g for g in graphs if g.is_default and g.scope == Scope.PRIVATE and g.kind == GraphKind.DOCUMENT), None
    )
    chosen = default or (graphs[0] if graphs else None)
    return graphs, chosen.id if chosen else ""


def pages_label(pages: int) -> str:
    """ "1 page", "3 pages". Pure."""
    return f"{pages} page{pluralize(pages)}"


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)  # noqa: S101 - login_required guarantees it
    return request.user


@login_required
def document_list(request: HttpRequest) -> HttpResponse:
    """The documents and the upload form. A file POST answers a quote (pages, credits, balance after: the REST
    dry_run's numbers) with a Confirm button; the Confirm POST uploads and charges, once per form token."""
    user = _user(request)
    graphs, default_graph_id = _upload_graphs(user)
    form = UploadForm(request.POST or None, request.FILES or None, graphs=graphs, default_graph_id=default_graph_id)
    quote: dict[str, Any] | None = None
    confirm: dict[str, str] = {}
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if data["stash"]:
            return _upload_confirm(request, user, data)
        upload_file = data["file"]
        try:
            size_check(int(upload_file.size or 0))
            upload = upload_validate(filename=upload_file.name, data=upload_file.read())
            prepared = document_upload_prepare(
                actor=user, upload=upload, scope=Scope(data["graph_scope"]), graph_id=data["graph_id"] or None
            )
            quote = document_upload_quote(actor=user, prepared=prepared)
        except ExoGraphError as exc:
            messages.error(request, f"{exc.message} {exc.hint}".strip())
            return redirect("documents:list")
        confirm = {
            "stash": stash_put(user_id=user.pk, filename=upload.filename, data=upload.data),
            "graph_id": prepared.graph.id,
            "graph_scope": prepared.graph.scope,
            "form_token": str(data.get("form_token") or ""),
        }
        quote["pages_label"] = pages_label(quote["pages"])
    page = Paginator(document_list_for_user(user=user), 25).get_page(request.GET.get("page"))
    context = {
        "form": form if quote is None else UploadForm(graphs=graphs, default_graph_id=default_graph_id),
        "page": page,
        "quote": quote,
        "confirm": confirm,
        "accept": ",".join(sorted(EXTENSIONS)),
        "accept_label": ACCEPTED_LABEL,
    }
    return render(request, "documents/list.html", context, status=400 if form.errors else 200)


def _upload_confirm(request: HttpRequest, user: User, data: dict[str, Any]) -> HttpResponse:
    """Confirm: upload the stashed file into the quoted graph and charge, once per (form token, form content); a
    second Confirm of the same form answers the first one's outcome, even after the stash is gone."""
    stash_id = data["stash"]
    stashed = stash_get(user_id=user.pk, stash_id=stash_id)
    try:
        if stashed is None:

            def work(key: str) -> tuple[dict[str, Any], int]:
                raise NotFound(
                    "This upload's confirmation has expired.",
                    code="upload_confirmation_expired",
                    hint="Choose the file again to see its price.",
                )

        else:
            filename, raw = stashed
            upload = upload_validate(filename=filename, data=raw)
            prepared = document_upload_prepare(
                actor=user, upload=upload, scope=Scope(data["graph_scope"]), graph_id=data["graph_id"] or None
            )

            def work(key: str) -> tuple[dict[str, Any], int]:
                done = document_upload(actor=user, prepared=prepared, idempotency_key=key)
                body = document_out(done.document, status=None if done.created else "unchanged")
                return {**body, **done.spent.fields()}, 201 if done.created else 200

        outcome = metered_form_run(request, account=user, endpoint=WEB_UPLOAD_ENDPOINT, work=work)
    except ExoGraphError as exc:
        messages.error(request, f"{exc.message} {exc.hint}".strip())
        return redirect("documents:list")
    stash_drop(user_id=user.pk, stash_id=stash_id)
    doc = outcome.body
    if outcome.replayed:
        messages.info(request, f"{doc['filename']} was already uploaded by this form; nothing more was charged.")
    elif outcome.status == 201:
        messages.success(
            request, f"{doc['filename']}: {pages_label(doc['pages'])}, {doc['credits_charged']} credits. Processing…"
        )
    else:
        messages.info(request, f"{doc['filename']} is already in that graph; nothing was charged.")
    return redirect("documents:list")


@login_required
@require_POST
def document_action(request: HttpRequest, document_id: str, action: str) -> HttpResponse:
    user = _user(request)
    try:
        if action == "cancel":
            document_cancel(actor=user, document_id=document_id)
        elif action == "retry":
            document_retry(actor=user, document_id=document_id, idempotency_key=f"web-retry:{uuid.uuid4().hex}")
        elif action == "delete":
            document_delete(actor=user, document_id=document_id)
    except ExoGraphError as exc:
        messages.error(request, f"{exc.message} {exc.hint}".strip())
    return redirect("documents:list")


def _page_number(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and 0 < int(value) < 1_000_000 else None


@login_required
def document_view(request: HttpRequest, document_id: str) -> HttpResponse:
    """The document as readable text, page by page, with the cited passage (?page=N&chunk=<id>) highlighted."""
    try:
        document = document_get_for_user(user=_user(request), document_id=document_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    chunk_id = (request.GET.get("chunk") or "")[:64]
    contents = None
    unavailable = ""
    try:
        contents = document_contents_read(
            graph=document.graph,
            document_id=str(document.id),
            page=_page_number(request.GET.get("page")),
            chunk_id=chunk_id,
        )
    except ExoGraphError as exc:
        unavailable = f"{exc.message} {exc.hint}".strip()
    context = {
        "document": document,
        "contents": contents,
        "unavailable": unavailable,
        "chunk_id": chunk_id,
        "pdf_page": _pdf_page(request, document, contents),
    }
    return render(request, "documents/view.html", context)


def _pdf_page(request: HttpRequest, document: Document, contents: dict[str, Any] | None) -> int | None:
    """The PDF page pdf.js renders beside the text (the text view's page), or None: not a PDF, or its file is not
    kept (processed before the viewer kept originals)."""
    if document.content_type != DocumentType.PDF or not document_has_original(document=document):
        return None
    page = _page_number(request.GET.get("page"))
    if page is None and contents and contents.get("numbered") and contents.get("chunks"):
        page = int(contents["page"])  # the cited passage's page
    return min(page or 1, max(int(document.pages or 1), 1))


@login_required
@require_GET
def document_file(request: HttpRequest, document_id: str) -> HttpResponse:
    """The original PDF, for the viewer's pdf.js; the owner's only (anyone else: 404, as for a missing id)."""
    try:
        document, data = document_original_get_for_user(user=_user(request), document_id=document_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    response = HttpResponse(data, content_type="application/pdf")
    response["Content-Disposition"] = (
        content_disposition_header(as_attachment=False, filename=document.filename) or "inline"
    )
    response["Cache-Control"] = "private, no-store"
    return response
