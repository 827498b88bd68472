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
from django.views.decorators.http import require_POST

from billing.metering import Meter
from billing.web import FormTokenField, metered_form_run
from exograph.accounts.models import User
from exograph.core.errors import ExoGraphError, NotFound
from exograph.core.scope import Scope
from exograph.documents.selectors import document_get_for_user, document_list_for_user
from exograph.documents.serializers import document_out
from exograph.documents.services import (
    document_cancel,
    document_charge_direct,
    document_charge_metered,
    document_create,
    document_delete,
    document_retry,
    document_upload_prepare,
)
from exograph.documents.validation import EXTENSIONS, size_check, upload_validate
from exograph.graphs.selectors import document_contents_read

WEB_UPLOAD_ENDPOINT = "documents.upload.web"


class UploadForm(forms.Form):
    file = forms.FileField()
    graph_scope = forms.ChoiceField(choices=Scope.choices, initial=Scope.PRIVATE)
    form_token = FormTokenField()  # a double submit of this form uploads and charges once


def pages_label(pages: int) -> str:
    """ "1 page", "3 pages". Pure."""
    return f"{pages} page{pluralize(pages)}"


def _user(request: HttpRequest) -> User:
    assert isinstance(request.user, User)  # noqa: S101 - login_required guarantees it
    return request.user


@login_required
def document_list(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload_file = form.cleaned_data["file"]
        try:
            size_check(int(upload_file.size or 0))
            upload = upload_validate(filename=upload_file.name, data=upload_file.read())
            prepared = document_upload_prepare(actor=user, upload=upload, scope=Scope(form.cleaned_data["graph_scope"]))

            def perform(meter: Meter) -> tuple[dict[str, Any], int]:
                document, created = document_create(
                    actor=meter.account, prepared=prepared, charge=document_charge_metered(meter)
                )
                return document_out(document, status=None if created else "unchanged"), 201 if created else 200

            outcome = metered_form_run(request, account=user, endpoint=WEB_UPLOAD_ENDPOINT, perform=perform)
        except ExoGraphError as exc:
            messages.error(request, f"{exc.message} {exc.hint}".strip())
            return redirect("documents:list")
        else:
            doc = outcome.body
            if outcome.replayed:
                messages.info(
                    request, f"{doc['filename']} was already uploaded by this form; nothing more was charged."
                )
            elif outcome.status == 201:
                messages.success(
                    request,
                    f"{doc['filename']}: {pages_label(doc['pages'])}, {doc['credits_charged']} credits. Processing…",
                )
            else:
                messages.info(request, f"{doc['filename']} is already in that graph; nothing was charged.")
            return redirect("documents:list")
    page = Paginator(document_list_for_user(user=user), 25).get_page(request.GET.get("page"))
    context = {
        "form": form,
        "page": page,
        "accept": ",".join(sorted(EXTENSIONS)),
        "accept_label": ", ".join(ext.lstrip(".").upper() for ext in sorted(EXTENSIONS)),
    }
    return render(request, "documents/list.html", context)


@login_required
@require_POST
def document_action(request: HttpRequest, document_id: str, action: str) -> HttpResponse:
    user = _user(request)
    try:
        if action == "cancel":
            document_cancel(actor=user, document_id=document_id)
        elif action == "retry":
            document_retry(
                actor=user,
                document_id=document_id,
                charge=document_charge_direct(actor=user, key=f"web-retry:{uuid.uuid4().hex}"),
            )
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
    context = {"document": document, "contents": contents, "unavailable": unavailable, "chunk_id": chunk_id}
    return render(request, "documents/view.html", context)
