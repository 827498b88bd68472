"""REST contract of research sessions: create (validation, hold, idempotency), status, list, cancel, export,
and isolation. The pipeline does not run here (no commit): sessions stay pending unless a test runs it."""

from __future__ import annotations

import pytest

from billing.models import Hold, HoldStatus
from billing.services import credit_balance
from exograph.graphs.models import Graph, GraphKind
from exograph.graphs.services import graph_create
from research.models import ResearchSession, ResearchStatus

pytestmark = pytest.mark.django_db
URL = "/api/v1/research/"


@pytest.fixture
def funded(alice, charlie, fund):  # type: ignore[no-untyped-def]
    fund(alice, 100)
    fund(charlie, 100)
    return alice


def test_create_holds_the_default_budget_and_answers_the_contract(alice_client, alice, funded):
    response = alice_client.post(URL, {"query": "  quantum   error correction "}, format="json")
    assert response.status_code == 202, response.json()
    body = response.json()
    assert body["status"] == "pending" and body["topic"] == "quantum error correction"
    assert body["scope"] == "private" and body["model"] == "snap"
    assert body["credits_held"] == 30 and body["credits_spent"] == 0 and body["balance"] == 70
    graph = Graph.objects.get(id=body["graph_id"])
    assert graph.owner == alice and graph.kind == GraphKind.RESEARCH and body["graph_name"] == graph.name
    hold = Hold.objects.get()
    assert hold.amount == 30 and hold.status == HoldStatus.OPEN
    assert set(body) >= {"id", "topic", "status", "scope", "graph_id", "graph_name", "model", "credits_held",
                         "credits_spent", "created", "balance"}  # fmt: skip


def test_create_with_ponder_budget_and_options(alice_client, funded):
    payload = {
        "query": "surface codes",
        "model": "ponder",
        "budget_credits": 100,
        "graph_scope": "world",
        "sources": ["local"],
        "date_from": "2020-01-01",
        "date_to": "2026-01-01",
        "excluded_domains": ["Example.COM", "www.spam.example.org"],
    }
    response = alice_client.post(URL, payload, format="json")
    assert response.status_code == 202, response.json()
    session = ResearchSession.objects.get(id=response.json()["id"])
    assert session.scope == "world" and session.graph.scope == "world" and session.model == "ponder"
    assert session.options == {
        "sources": ["local"],
        "date_from": "2020-01-01",
        "date_to": "2026-01-01",
        "excluded_domains": ["example.com", "spam.example.org"],
    }
    assert credit_balance(account=session.owner) == 0


def test_idempotency_key_replays_the_first_answer_and_holds_once(alice_client, funded):
    headers = {"HTTP_IDEMPOTENCY_KEY": "research-1"}
    first = alice_client.post(URL, {"query": "quantum error correction"}, format="json", **headers)
    second = alice_client.post(URL, {"query": "quantum error correction"}, format="json", **headers)
    assert first.status_code == second.status_code == 202
    assert first.json() == second.json() and second["Idempotent-Replayed"] == "true"
    assert Hold.objects.count() == 1 and ResearchSession.objects.count() == 1
    other = alice_client.post(URL, {"query": "something else"}, format="json", **headers)
    assert other.status_code == 422


def _nothing_held(user, graphs_before: int) -> None:  # type: ignore[no-untyped-def]
    assert credit_balance(account=user) == 100
    assert not Hold.objects.exists() and not ResearchSession.objects.exists()
    assert Graph.objects.filter(owner=user).count() == graphs_before


BAD_INPUT = [
    ({"query": ""}, 400, "invalid_query"),
    ({"query": "  "}, 400, "invalid_query"),
    ({"query": "ab"}, 400, "invalid_query"),
    ({"query": "x" * 20_000}, 400, "invalid_query"),
    ({"query": "quantum", "budget_credits": 0}, 400, "invalid_budget"),
    ({"query": "quantum", "budget_credits": -5}, 400, "invalid_budget"),
    ({"query": "quantum", "budget_credits": 30.5}, 400, "invalid"),
    ({"query": "quantum", "budget_credits": 29}, 400, "invalid_budget"),
    ({"query": "quantum", "budget_credits": 101}, 402, "insufficient_credits"),
    ({"query": "quantum", "model": "ponder", "budget_credits": 50}, 400, "invalid_budget"),
    ({"query": "quantum", "model": "huge"}, 400, "invalid_model"),
    ({"query": "quantum", "graph_id": "graph_nope"}, 404, "graph_not_found"),
    ({"query": "quantum", "sources": ["tv"]}, 400, "invalid_sources"),
    ({"query": "quantum", "sources": []}, 400, "invalid_sources"),
    ({"query": "quantum", "excluded_domains": ["not a domain"]}, 400, "invalid_domain"),
    ({"query": "quantum", "date_from": "2024-02-01", "date_to": "2024-01-01"}, 400, "invalid_date_range"),
    ({"query": "quantum", "date_from": "yesterday"}, 400, "invalid"),
    ({"query": "quantum", "watch": "hourly"}, 400, "invalid"),
    ({"query": "tidal barrage sediment", "budget": 60}, 400, "unknown_field"),  # budget_credits, misspelt
]


@pytest.mark.parametrize(("payload", "status", "code"), BAD_INPUT)
def test_bad_input_is_a_clear_error_and_holds_nothing(alice_client, alice, funded, payload, status, code):
    before = Graph.objects.filter(owner=alice).count()
    response = alice_client.post(URL, payload, format="json")
    assert response.status_code == status, response.json()
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    _nothing_held(alice, before)


@pytest.mark.parametrize(("payload", "status", "code"), BAD_INPUT)
def test_a_dry_run_of_bad_input_answers_what_the_real_call_answers(alice_client, alice, funded, payload, status, code):
    before = Graph.objects.filter(owner=alice).count()
    quote = alice_client.post(URL, {**payload, "dry_run": True}, format="json")
    real = alice_client.post(URL, payload, format="json")
    assert real.status_code == status
    if status == 402:  # a quote past the balance is an answer: not covered, refused as the real call is
        assert quote.status_code == 200 and quote.json()["covered"] is False
        assert quote.json()["refusal"] == real.json()["error"]
    else:  # invalid input is the same error either way
        assert (quote.status_code, quote.json()) == (real.status_code, real.json())
    _nothing_held(alice, before)


@pytest.mark.parametrize(
    ("payload", "needed"),
    [
        ({}, 30),
        ({"budget_credits": 45}, 45),
        ({"model": "ponder"}, 100),
        ({"model": "ponder", "budget_credits": 100.0}, 100),
        ({"graph_scope": "world", "sources": ["paper"], "excluded_domains": ["example.com"], "watch": "weekly"}, 30),
    ],
)
@pytest.mark.parametrize("form", ["json", "text", "query"])
def test_dry_run_quotes_the_hold_the_real_call_then_takes(alice_client, alice, funded, payload, needed, form):
    body = {"query": "quantum error correction", **payload}
    path = URL + ("?dry_run=true" if form == "query" else "")
    if form != "query":
        body["dry_run"] = True if form == "json" else "1"
    before = Graph.objects.filter(owner=alice).count()
    quote = alice_client.post(path, body, format="json")
    assert quote.status_code == 200, quote.json()
    model = payload.get("model", "snap")
    assert quote.json() == {"dry_run": True, "credits_needed": needed, "balance": 100, "covered": True, "model": model}
    _nothing_held(alice, before)
    body.pop("dry_run", None)
    real = alice_client.post(URL, body, format="json")
    assert real.status_code == 202, real.json()
    assert real.json()["credits_held"] == needed == Hold.objects.get().amount
    assert real.json()["balance"] == credit_balance(account=alice) == 100 - needed


def test_a_dry_run_into_a_graph_of_yours_quotes_and_anothers_graph_is_the_real_404(alice_client, charlie, funded):
    charlies = graph_create(actor=charlie, name="Charlie's", scope="private")
    mine = graph_create(actor=funded, name="Mine", scope="private")
    quote = alice_client.post(URL, {"query": "quantum", "graph_id": mine.id, "dry_run": True}, format="json")
    assert quote.status_code == 200 and quote.json()["covered"] is True
    foreign = alice_client.post(URL, {"query": "quantum", "graph_id": charlies.id, "dry_run": True}, format="json")
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "graph_not_found"
    assert not Hold.objects.exists() and not ResearchSession.objects.exists()


@pytest.mark.parametrize(
    ("payload", "code", "names"),
    [
        ({"sources": ["paper"] * 10_000}, "invalid_sources", "sources lists at most 3 kinds"),
        ({"sources": ["paper", "article", "local", "paper"]}, "invalid_sources", "sources lists at most 3"),
        ({"sources": ["paper", "paper"]}, "invalid_sources", "sources names 'paper' twice"),
        ({"excluded_domains": ["http://evil/../"]}, "invalid_domain", "excluded_domains[0] 'http://evil/../'"),
        ({"excluded_domains": ["ok.org", "example.com:8080"]}, "invalid_domain", "excluded_domains[1]"),
        ({"excluded_domains": ["example.com/path"]}, "invalid_domain", "no scheme, path, port"),
        ({"excluded_domains": ["exa mple.com"]}, "invalid_domain", "excluded_domains[0]"),
        ({"excluded_domains": ["user@example.com"]}, "invalid_domain", "excluded_domains[0]"),
        ({"excluded_domains": ["-bad-.com"]}, "invalid_domain", "not a valid host name"),
        ({"excluded_domains": [f"d{i}.example" for i in range(51)]}, "too_many_domains", "at most 50 domains"),
    ],
)
def test_source_options_are_capped_and_domains_are_bare_host_names(alice_client, alice, funded, payload, code, names):
    before = Graph.objects.filter(owner=alice).count()
    response = alice_client.post(URL, {"query": "quantum", **payload}, format="json")
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert error["code"] == code and names in error["message"] and error["hint"]
    _nothing_held(alice, before)


def test_foreign_graph_is_404_and_a_world_session_cannot_target_a_private_graph(alice_client, alice, charlie, funded):
    charlies = graph_create(actor=charlie, name="Charlie's", scope="private")
    mine = graph_create(actor=alice, name="Mine", scope="private")
    before = Graph.objects.filter(owner=alice).count()
    response = alice_client.post(URL, {"query": "quantum", "graph_id": charlies.id}, format="json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "graph_not_found"
    response = alice_client.post(URL, {"query": "quantum", "graph_id": "world"}, format="json")
    assert response.status_code == 404
    response = alice_client.post(URL, {"query": "quantum", "graph_id": mine.id, "graph_scope": "world"}, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "graph_scope_mismatch"
    _nothing_held(alice, before)
    response = alice_client.post(URL, {"query": "quantum", "graph_id": mine.id}, format="json")
    assert response.status_code == 202 and response.json()["graph_id"] == mine.id
    assert response.json()["scope"] == "private"


def test_status_list_and_cancel_and_charlie_sees_nothing(alice_client, charlie_client, alice, funded):
    ids = []
    for topic in ("first topic", "second topic"):
        ids.append(alice_client.post(URL, {"query": topic}, format="json").json()["id"])
    charlie_own = charlie_client.post(URL, {"query": "charlie topic"}, format="json").json()["id"]
    detail = alice_client.get(f"{URL}{ids[0]}/").json()
    assert detail["status"] == "pending" and detail["report"] is None and detail["completed"] is None
    assert detail["progress"] == {"step": "queued", "percent": 0, "sources_found": 0, "sources_read": 0}
    assert detail["papers"] == detail["articles"] == 0 and detail["note"] == detail["error"] == ""
    page = alice_client.get(URL, {"limit": 1}).json()
    assert [s["id"] for s in page["results"]] == [ids[1]] and page["next"]
    assert "report" not in page["results"][0]
    nxt = alice_client.get(page["next"]).json()
    assert [s["id"] for s in nxt["results"]] == [ids[0]]
    assert alice_client.get(URL, {"graph_scope": "world"}).json()["results"] == []
    assert alice_client.get(URL, HTTP_X_GRAPH_SCOPE="world").json()["results"] == []
    assert len(alice_client.get(URL, HTTP_X_GRAPH_SCOPE="private").json()["results"]) == 2
    for bad in (0, 101, "x"):
        response = alice_client.get(URL, {"limit": bad})
        assert response.status_code == 400, bad
    assert alice_client.get(URL, {"cursor": "garbage"}).status_code == 400
    # charlie: his own session only; alice's ids are 404 everywhere
    assert [s["id"] for s in charlie_client.get(URL).json()["results"]] == [charlie_own]
    for path in (f"{URL}{ids[0]}/", f"{URL}{ids[0]}/export/?format=md"):
        response = charlie_client.get(path)
        assert response.status_code == 404 and response.json()["error"]["code"] == "research_not_found"
    assert charlie_client.post(f"{URL}{ids[0]}/cancel/").status_code == 404
    assert alice_client.get(f"{URL}not-a-uuid/").status_code == 404
    # cancel: released, final
    response = alice_client.post(f"{URL}{ids[0]}/cancel/")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert credit_balance(account=alice) == 100 - 30
    assert Hold.objects.get(reference=f"research {ids[0]}").status == HoldStatus.CLOSED
    again = alice_client.post(f"{URL}{ids[0]}/cancel/")
    assert again.status_code == 409 and again.json()["error"]["code"] == "research_finished"
    assert alice_client.get(f"{URL}{ids[1]}/export/?format=md").status_code == 409
    bad_format = alice_client.get(f"{URL}{ids[1]}/export/?format=pdf")
    assert bad_format.status_code == 400
    assert "'md' or 'docx'" in bad_format.json()["error"]["message"]  # names the formats it takes
    assert ResearchSession.objects.get(id=ids[1]).status == ResearchStatus.PENDING
