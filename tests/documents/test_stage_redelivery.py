"""A stage's message redelivered after the document moved on stops without touching what the later stage owns."""

from __future__ import annotations

import pytest

from billing.services import credits_grant_admin
from exograph.core.models import Lease
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentChunk, DocumentStatus
from exograph.documents.services import (
    document_stage_embed,
    document_stage_index,
    document_stage_parse,
    document_text_ingest,
)
from exograph.documents.services.state import DOCUMENT_LEASE, INDEX_TASK
from exograph.graphs.models import GraphKind
from exograph.graphs.services import graph_default_for_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]


def test_a_parse_redelivered_after_the_embed_stage_stops_and_leaves_chunks_and_lease_alone(alice):  # type: ignore[no-untyped-def]
    credits_grant_admin(account=alice, amount=100, actor=None, note="tests")
    graph = graph_default_for_user(actor=alice, scope=Scope.PRIVATE, kind=GraphKind.DOCUMENT)
    document, _ = document_text_ingest(  # the pipeline is driven by hand below (no on_commit here)
        actor=alice,
        graph=graph,
        title="Tidewick lighthouse",
        text="The Tidewick lighthouse was relit in 1911 after the harbour of Quillmoor froze.",
        idempotency_key="redelivery-1",
    )
    pk = str(document.pk)
    assert document_stage_parse(document_id=pk)
    assert document_stage_embed(document_id=pk)
    chunks = sorted(DocumentChunk.objects.filter(document_id=pk).values_list("id", flat=True))
    lease = Lease.objects.get(kind=DOCUMENT_LEASE, subject_id=pk)
    assert lease.step == INDEX_TASK

    assert document_stage_parse(document_id=pk) is False  # late: the document is past parsing

    assert sorted(DocumentChunk.objects.filter(document_id=pk).values_list("id", flat=True)) == chunks
    assert not DocumentChunk.objects.filter(document_id=pk, embedding__isnull=True).exists()
    after = Lease.objects.get(kind=DOCUMENT_LEASE, subject_id=pk)
    assert (after.step, after.token, after.holder) == (lease.step, lease.token, lease.holder)
    document_stage_index(document_id=pk)  # False: the document is processed, nothing goes on
    assert Document.objects.get(pk=pk).status == DocumentStatus.PROCESSED
