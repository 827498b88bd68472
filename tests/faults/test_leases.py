"""Leases (exograph/core/leases.py) and the document stage lease: an interrupted stage is resumed by the sweep,
or failed and refunded after repeated interruptions; retry resumes a document whose stage lease expired."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from billing.models import CreditEntry
from billing.services import credit_balance, credits_grant_admin
from exograph.core.leases import LeaseBusy, lease_acquire, lease_expired, lease_hold, lease_release, leases_sweep
from exograph.core.models import Lease
from exograph.documents.models import Document, DocumentStage, DocumentStatus
from exograph.documents.services.state import DOCUMENT_LEASE, EMBED_TASK, PARSE_TASK

pytestmark = [pytest.mark.faults, pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

URL = "/api/v1/documents/"
TEXT = (
    "Marie Curie was a physicist and chemist who worked in Paris. She discovered polonium and radium "
    "with Pierre Curie at the University of Paris. "
) * 8


@pytest.fixture
def funded(alice, charlie):
    for user in (alice, charlie):
        credits_grant_admin(account=user, amount=100, actor=None, note="tests")
    return alice


def _queued_text(client) -> dict[str, str]:
    """A text document uploaded inside the test transaction: its on-commit pipeline start never runs."""
    tag = uuid.uuid4().hex[:8]
    response = client.post(URL, {"text": f"Notes {tag}. {TEXT}", "title": f"Curie {tag}"}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def _interrupted(document_id: str, *, step: str, recoveries: int = 0) -> None:
    """The state a SIGKILLed worker leaves: processing, its stage lease held by a dead runner and expired."""
    stage = DocumentStage.PARSE if step == PARSE_TASK else DocumentStage.EMBED
    Document.objects.filter(pk=document_id).update(status=DocumentStatus.PROCESSING, stage=stage)
    past = timezone.now() - timedelta(seconds=5)
    Lease.objects.update_or_create(  # the upload recorded its first stage as due: the dead runner had taken it
        kind=DOCUMENT_LEASE,
        subject_id=document_id,
        defaults={
            "step": step,
            "holder": "gone-host:4242",
            "token": uuid.uuid4(),
            "expires_at": past,
            "heartbeat_at": past,
            "recoveries": recoveries,
        },
    )


def _upload_entries(document_id: str) -> list[tuple[str, int]]:
    return list(
        CreditEntry.objects.filter(reference__contains=document_id).order_by("id").values_list("kind", "amount")
    )


# --- the mechanism -----------------------------------------------------------------------------


def test_a_live_lease_is_busy_an_expired_one_is_taken_over_keeping_its_recoveries():
    held = lease_acquire(kind="test.work", subject_id="s1", step="a", ttl=60)
    with pytest.raises(LeaseBusy):
        lease_acquire(kind="test.work", subject_id="s1", step="a", ttl=60)
    Lease.objects.filter(kind="test.work").update(expires_at=timezone.now() - timedelta(seconds=1), recoveries=1)
    assert lease_expired(kind="test.work", subject_id="s1")
    taken = lease_acquire(kind="test.work", subject_id="s1", step="b", ttl=60)
    assert not held.renew() and held.lost  # the old runner learns it lost the lease
    lease = Lease.objects.get(kind="test.work", subject_id="s1")
    assert (lease.step, lease.recoveries, lease.token) == ("b", 1, taken.token)
    lease_release(held)  # not ours any more: nothing happens
    assert Lease.objects.filter(kind="test.work").exists()
    lease_release(taken)
    assert not Lease.objects.filter(kind="test.work").exists()


def test_a_lease_of_a_dead_local_process_is_taken_over_before_it_expires():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])  # noqa: S603
    dead.wait(timeout=30)
    lease_acquire(kind="test.work", subject_id="s2", ttl=600)
    Lease.objects.filter(kind="test.work").update(holder=f"{__import__('socket').gethostname()}:{dead.pid}")
    assert lease_expired(kind="test.work", subject_id="s2")
    lease_acquire(kind="test.work", subject_id="s2", ttl=600)  # no LeaseBusy


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_renews_a_held_lease_and_the_block_releases_it():
    with lease_hold(kind="test.work", subject_id="s3", step="x", ttl=3.0) as held:
        first = Lease.objects.get(kind="test.work", subject_id="s3").expires_at
        time.sleep(2.5)  # past ttl/3: at least one renewal
        later = Lease.objects.get(kind="test.work", subject_id="s3")
        assert later.expires_at > first and not held.lost
        assert not lease_expired(kind="test.work", subject_id="s3")
    assert not Lease.objects.filter(kind="test.work").exists()


def test_a_due_lease_is_one_upsert_and_an_unheld_lease_is_taken_in_one_statement_keeping_its_recoveries():
    """The batch ingest records, takes and hands on a lease per document and stage (issue 29 section 5): a due lease
    is written in one statement whether its row exists or not, and an unheld one is taken in one."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from exograph.core.leases import holder_name, lease_due

    past = timezone.now() - timedelta(seconds=5)
    Lease.objects.create(
        kind="test.work", subject_id="s5", step="old", holder="", token=uuid.uuid4(), expires_at=past,
        heartbeat_at=past, recoveries=2,
    )  # fmt: skip
    with CaptureQueriesContext(connection) as queries:
        token = lease_due(kind="test.work", subject_id="s5", step="a")  # overwritten: due, a fresh count
        fresh = lease_due(kind="test.work", subject_id="s6", step="a")  # created
    assert len(queries) == 2
    lease = Lease.objects.get(kind="test.work", subject_id="s5")
    assert (lease.step, lease.holder, lease.token, lease.recoveries) == ("a", "", token, 0)
    assert lease.expires_at > timezone.now()
    assert Lease.objects.get(kind="test.work", subject_id="s6").token == fresh

    Lease.objects.filter(subject_id="s5").update(recoveries=1)  # resumed once by the sweep
    with CaptureQueriesContext(connection) as queries:
        held = lease_acquire(kind="test.work", subject_id="s5", step="b", ttl=60)
    assert len(queries) == 1
    lease = Lease.objects.get(kind="test.work", subject_id="s5")
    assert (lease.step, lease.holder, lease.token, lease.recoveries) == ("b", holder_name(), held.token, 1)
    with pytest.raises(LeaseBusy):
        lease_acquire(kind="test.work", subject_id="s5", step="b", ttl=60)


def test_a_lease_handed_to_a_step_this_process_runs_next_is_queued_in_the_same_update():
    from exograph.core.leases import leases_queued

    with lease_hold(kind=DOCUMENT_LEASE, subject_id="d1", step=PARSE_TASK) as held:
        held.hand_off(EMBED_TASK, queued=True)
    with lease_hold(kind=DOCUMENT_LEASE, subject_id="d2", step=PARSE_TASK) as other:
        other.hand_off(EMBED_TASK)  # its message is still to be sent: due within LEASE_STUCK_SECONDS
    window = timezone.now() + timedelta(seconds=settings.LEASE_STUCK_SECONDS + 60)
    lease = Lease.objects.get(kind=DOCUMENT_LEASE, subject_id="d1")
    assert (lease.step, lease.holder, lease.token) == (EMBED_TASK, "", held.next_token)
    assert lease.expires_at > window  # the kind's requeue window, as lease_queued gives it
    assert Lease.objects.get(kind=DOCUMENT_LEASE, subject_id="d2").expires_at < window

    # Many at once: each row moves only with its own subject's token.
    assert held.next_token is not None and other.next_token is not None
    assert leases_queued(kind=DOCUMENT_LEASE, tokens={"d2": held.next_token}) == 0
    assert leases_queued(kind=DOCUMENT_LEASE, tokens={"d2": other.next_token, "d3": uuid.uuid4()}) == 1
    assert Lease.objects.get(kind=DOCUMENT_LEASE, subject_id="d2").expires_at > window


@pytest.mark.django_db(transaction=True)
def test_many_holds_share_one_heartbeat_thread_that_renews_each_and_warns_of_a_takeover(caplog):
    """A hold starts no thread of its own (a batch ingest takes three a document): one thread per process renews
    every held lease, two at once included; a lease taken over meanwhile is dropped from it with one warning."""
    import logging
    import threading

    def beats() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("lease")]

    for n in range(5):  # short holds, one after the other
        with lease_hold(kind="test.work", subject_id=f"quick{n}", ttl=600):
            pass
    assert len(beats()) == 1
    with caplog.at_level(logging.WARNING, logger="exograph.core.leases"):
        with (
            lease_hold(kind="test.work", subject_id="a", ttl=3.0) as a,
            lease_hold(kind="test.work", subject_id="b", ttl=3.0) as b,
        ):
            assert len(beats()) == 1
            time.sleep(3.5)  # past ttl: alive only if renewed
            assert not lease_expired(kind="test.work", subject_id="a")
            assert not lease_expired(kind="test.work", subject_id="b")
            Lease.objects.filter(kind="test.work", subject_id="b").update(token=uuid.uuid4())  # someone took b
            time.sleep(1.5)  # past ttl/3: b's next renewal finds it gone
            assert b.lost and not a.lost
            assert not lease_expired(kind="test.work", subject_id="a")
    taken = [r for r in caplog.records if "taken over" in r.getMessage()]
    assert len(taken) == 1 and "test.work:b" in taken[0].getMessage()
    assert not Lease.objects.filter(kind="test.work", subject_id="a").exists()


def test_the_sweep_runs_every_lease_sweep_seconds_from_beat():
    entries = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "core.leases_sweep"]
    assert entries == [
        {
            "task": "core.leases_sweep",
            "schedule": settings.LEASE_SWEEP_SECONDS,
            "options": {"queue": "default", "expires": settings.LEASE_SWEEP_SECONDS},
        }
    ]
    assert settings.LEASE_TTL_SECONDS + settings.LEASE_SWEEP_SECONDS <= 60  # resumed within a minute


# --- documents ---------------------------------------------------------------------------------


def test_an_interrupted_stage_is_resumed_by_the_sweep_and_paid_once(alice_client, funded, charlie_client):
    document = _queued_text(alice_client)
    theirs = _queued_text(charlie_client)  # charlie's own document, never touched by alice's recovery
    after_charge = credit_balance(account=funded)
    _interrupted(document["id"], step=PARSE_TASK)

    assert leases_sweep() == {"resumed": 1}  # eager Celery: the resumed stages run right here

    row = Document.objects.get(pk=document["id"])
    assert (row.status, row.failure_reason) == (DocumentStatus.PROCESSED, "")
    assert credit_balance(account=funded) == after_charge
    assert [kind for kind, _ in _upload_entries(document["id"])] == ["charge"]
    assert not Lease.objects.filter(subject_id=document["id"]).exists()
    assert Document.objects.get(pk=theirs["id"]).status == DocumentStatus.PENDING


def test_a_stage_interrupted_again_and_again_is_failed_with_a_reason_and_refunded(alice_client, funded):
    document = _queued_text(alice_client)
    before = credit_balance(account=funded) + int(document["credits_charged"])
    _interrupted(document["id"], step=EMBED_TASK, recoveries=2)  # resumed twice already

    assert leases_sweep() == {"given_up": 1}

    row = Document.objects.get(pk=document["id"])
    assert row.status == DocumentStatus.FAILED and row.failure_stage == DocumentStage.EMBED
    assert "interrupted 3 times" in row.failure_reason and "refunded" in row.failure_reason
    assert credit_balance(account=funded) == before
    assert [kind for kind, _ in _upload_entries(document["id"])] == ["charge", "refund"]
    assert not Lease.objects.exists()


def test_a_lease_of_a_document_that_ended_another_way_is_dropped(alice_client, funded):
    document = _queued_text(alice_client)
    _interrupted(document["id"], step=EMBED_TASK)
    assert alice_client.post(f"{URL}{document['id']}/cancel/").status_code == 200

    assert leases_sweep() == {"dropped": 1}
    assert Document.objects.get(pk=document["id"]).status == DocumentStatus.CANCELLED
    assert not Lease.objects.exists()


def test_retry_resumes_a_document_whose_stage_lease_expired_without_charging(alice_client, funded):
    document = _queued_text(alice_client)
    live = _queued_text(alice_client)
    Document.objects.filter(pk=live["id"]).update(status=DocumentStatus.PROCESSING)
    lease_acquire(kind=DOCUMENT_LEASE, subject_id=live["id"], step=EMBED_TASK)  # a runner is on it
    after_charge = credit_balance(account=funded)
    _interrupted(document["id"], step=EMBED_TASK, recoveries=2)

    response = alice_client.post(f"{URL}{document['id']}/retry/")

    assert response.status_code == 202, response.json()
    assert Document.objects.get(pk=document["id"]).status == DocumentStatus.PROCESSED
    assert credit_balance(account=funded) == after_charge
    assert [kind for kind, _ in _upload_entries(document["id"])] == ["charge"]
    busy = alice_client.post(f"{URL}{live['id']}/retry/")
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "document_not_retryable"
    assert "resumed by itself within" in busy.json()["error"]["hint"]


def test_a_duplicate_of_a_running_stage_stops_without_touching_the_document(alice_client, funded):
    from exograph.documents.services import document_stage_parse

    document = _queued_text(alice_client)
    Document.objects.filter(pk=document["id"]).update(status=DocumentStatus.PROCESSING)
    lease_acquire(kind=DOCUMENT_LEASE, subject_id=document["id"], step=PARSE_TASK)

    assert document_stage_parse(document_id=document["id"]) is False
    row = Document.objects.get(pk=document["id"])
    assert (row.status, row.stage, row.chunk_count) == (DocumentStatus.PROCESSING, DocumentStage.QUEUED, 0)


def test_a_late_redelivery_of_an_earlier_stage_stops(alice_client, funded):
    from exograph.documents.services import document_stage_parse

    document = _queued_text(alice_client)
    Document.objects.filter(pk=document["id"]).update(status=DocumentStatus.PROCESSING, stage=DocumentStage.EXTRACT)

    assert document_stage_parse(document_id=document["id"]) is False
    assert Document.objects.get(pk=document["id"]).stage == DocumentStage.EXTRACT
    lease = Lease.objects.get(subject_id=document["id"])  # the due lease the upload wrote, untouched
    assert (lease.holder, lease.step) == ("", PARSE_TASK)


def test_a_stage_waiting_for_its_retry_keeps_a_parked_lease_and_a_lost_retry_is_resumed(
    alice_client, funded, settings, tmp_path
):
    """FalkorDB is down when the index stage writes: the stage raises for Celery's retry and parks its lease for
    the longest backoff. If that retry message is lost with its worker, the sweep resumes the stage once the
    parked lease expires (not the broker's 20-minute visibility timeout); the document is charged once."""
    from exograph.core import falkor
    from exograph.core.errors import TransientError
    from exograph.documents.services import (
        INDEX_TASK,
        RETRY_BACKOFF_MAX,
        document_stage_embed,
        document_stage_index,
        document_stage_parse,
    )

    document = _queued_text(alice_client)
    assert document_stage_parse(document_id=document["id"]) and document_stage_embed(document_id=document["id"])
    live = settings.FALKORDB_URL
    settings.FALKORDB_URL = f"unix://{tmp_path}/dead.sock"
    falkor._clients.clear()
    try:
        with pytest.raises(TransientError):
            document_stage_index(document_id=document["id"], last_attempt=False)
    finally:
        settings.FALKORDB_URL = live
        falkor._clients.clear()
    parked = Lease.objects.get(kind=DOCUMENT_LEASE, subject_id=document["id"])
    wait = (parked.expires_at - timezone.now()).total_seconds()
    assert parked.holder == "" and parked.step == INDEX_TASK
    assert RETRY_BACKOFF_MAX < wait <= RETRY_BACKOFF_MAX + settings.LEASE_TTL_SECONDS
    assert leases_sweep() == {}  # still waiting for the retry: nothing to do
    assert Document.objects.get(pk=document["id"]).status == DocumentStatus.PROCESSING

    Lease.objects.filter(pk=parked.pk).update(expires_at=timezone.now() - timedelta(seconds=1))  # the retry was lost
    assert leases_sweep() == {"resumed": 1}

    assert Document.objects.get(pk=document["id"]).status == DocumentStatus.PROCESSED
    assert [kind for kind, _ in _upload_entries(document["id"])] == ["charge"]
    assert not Lease.objects.exists()


# --- work recorded before it is announced (issue 23) ---------------------------------------------


def _expire(document_id: str) -> None:
    """LEASE_STUCK_SECONDS pass (the test moves the lease's expiry instead of waiting)."""
    Lease.objects.filter(kind=DOCUMENT_LEASE, subject_id=document_id).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )


def test_an_upload_records_its_first_stage_as_due_and_a_message_never_sent_is_resumed_by_the_sweep(
    alice_client, funded
):
    """The web process died between the upload's commit and its on-commit enqueue (here: the test transaction,
    whose on-commit callbacks never run). The upload's own transaction left a due lease: the sweep starts it."""
    document = _queued_text(alice_client)
    after_charge = credit_balance(account=funded)
    due = Lease.objects.get(kind=DOCUMENT_LEASE, subject_id=document["id"])
    assert (due.holder, due.step, due.recoveries) == ("", PARSE_TASK, 0)
    assert due.expires_at <= timezone.now() + timedelta(seconds=settings.LEASE_STUCK_SECONDS)
    assert leases_sweep() == {}  # within its bound: the message may still be on its way

    _expire(document["id"])
    assert leases_sweep() == {"resumed": 1}

    assert Document.objects.get(pk=document["id"]).status == DocumentStatus.PROCESSED
    assert credit_balance(account=funded) == after_charge
    assert [kind for kind, _ in _upload_entries(document["id"])] == ["charge"]
    assert not Lease.objects.filter(subject_id=document["id"]).exists()


def test_a_stage_whose_next_message_cannot_be_sent_hands_its_lease_on_and_the_sweep_sends_it(
    alice_client, funded, monkeypatch
):
    """The broker died under a finishing stage: its next stage's message raises kombu's OperationalError. The
    stage's lease became the next stage's (due) before the send, so the sweep sends it once the broker is back."""
    from kombu.exceptions import OperationalError

    from exograph.documents import tasks
    from exograph.documents.services import state

    document = _queued_text(alice_client)
    after_charge = credit_balance(account=funded)
    real = state.celery_app.signature

    def broker_down(name, *args, **kwargs):
        signature = real(name, *args, **kwargs)
        if name == EMBED_TASK:
            monkeypatch.setattr(signature, "delay", lambda *a, **k: (_ for _ in ()).throw(OperationalError("down")))
        return signature

    monkeypatch.setattr(state.celery_app, "signature", broker_down)
    tasks.document_parse_task.apply(args=(document["id"],)).get()  # no error: the sweep owns the next step now
    monkeypatch.undo()

    row = Document.objects.get(pk=document["id"])
    assert (row.status, row.stage) == (DocumentStatus.PROCESSING, DocumentStage.CHUNK)
    due = Lease.objects.get(kind=DOCUMENT_LEASE, subject_id=document["id"])
    assert (due.holder, due.step, due.recoveries) == ("", EMBED_TASK, 0)
    _expire(document["id"])
    assert leases_sweep() == {"resumed": 1}

    assert Document.objects.get(pk=document["id"]).status == DocumentStatus.PROCESSED
    assert credit_balance(account=funded) == after_charge
    assert [kind for kind, _ in _upload_entries(document["id"])] == ["charge"]


def test_a_document_with_no_lease_and_no_progress_is_resumed_by_the_sweep(alice_client, funded):
    """Work left without any lease (a version without these records, a lease lost some other way): once it has
    not changed for LEASE_STUCK_SECONDS the sweep gives it a lease and resumes it at its stage."""
    stale, fresh = _queued_text(alice_client), _queued_text(alice_client)
    Lease.objects.filter(subject_id__in=[stale["id"], fresh["id"]]).delete()
    Document.objects.filter(pk=stale["id"]).update(modified=timezone.now() - timedelta(hours=1))

    assert leases_sweep() == {"resumed": 1}

    assert Document.objects.get(pk=stale["id"]).status == DocumentStatus.PROCESSED
    assert [kind for kind, _ in _upload_entries(stale["id"])] == ["charge"]
    assert Document.objects.get(pk=fresh["id"]).status == DocumentStatus.PENDING  # recent: left alone for now


def test_retry_resumes_a_pending_document_no_runner_holds_at_once_and_charges_nothing(alice_client, funded):
    document = _queued_text(alice_client)  # its message was never sent; its due lease has not expired yet
    after_charge = credit_balance(account=funded)

    response = alice_client.post(f"{URL}{document['id']}/retry/")

    assert response.status_code == 202, response.json()
    assert Document.objects.get(pk=document["id"]).status == DocumentStatus.PROCESSED
    assert credit_balance(account=funded) == after_charge
    assert [kind for kind, _ in _upload_entries(document["id"])] == ["charge"]


def test_retry_resumes_a_document_that_lost_its_lease_at_once(alice_client, funded):
    document = _queued_text(alice_client)
    Document.objects.filter(pk=document["id"]).update(status=DocumentStatus.PROCESSING, stage=DocumentStage.EMBED)
    Lease.objects.filter(subject_id=document["id"]).delete()  # what the old enqueue failure left

    response = alice_client.post(f"{URL}{document['id']}/retry/")

    assert response.status_code == 202, response.json()
    assert Document.objects.get(pk=document["id"]).status == DocumentStatus.PROCESSED
    assert [kind for kind, _ in _upload_entries(document["id"])] == ["charge"]


def test_uploading_a_stuck_file_again_resumes_it_and_charges_nothing(alice_client, funded):
    tag = uuid.uuid4().hex[:8]
    body = {"text": f"Notes {tag}. {TEXT}", "title": f"Curie {tag}"}
    first = alice_client.post(URL, body, format="json")
    assert first.status_code == 201, first.json()
    document_id = first.json()["id"]
    after_charge = credit_balance(account=funded)
    _expire(document_id)  # its message never went out and its bound passed: stuck until the next sweep

    again = alice_client.post(URL, body, format="json")

    assert again.status_code == 200 and again.json()["id"] == document_id, again.json()
    assert Document.objects.get(pk=document_id).status == DocumentStatus.PROCESSED
    assert credit_balance(account=funded) == after_charge
    assert [kind for kind, _ in _upload_entries(document_id)] == ["charge"]


def test_the_number_of_resumptions_before_giving_up_is_a_setting(alice_client, funded, settings):
    settings.LEASE_MAX_RECOVERIES = 0
    document = _queued_text(alice_client)
    _interrupted(document["id"], step=EMBED_TASK)

    assert leases_sweep() == {"given_up": 1}
    assert Document.objects.get(pk=document["id"]).status == DocumentStatus.FAILED
    assert [kind for kind, _ in _upload_entries(document["id"])] == ["charge", "refund"]


def test_a_stage_run_twice_leaves_the_next_stage_due(alice_client, funded):
    from exograph.documents.services import document_stage_parse

    document = _queued_text(alice_client)
    assert document_stage_parse(document_id=document["id"])  # hands its lease to the embed stage (never sent here)
    assert document_stage_parse(document_id=document["id"])  # the parse message delivered once more: parses again

    due = Lease.objects.get(kind=DOCUMENT_LEASE, subject_id=document["id"])
    assert (due.holder, due.step, due.recoveries) == ("", EMBED_TASK, 0)
