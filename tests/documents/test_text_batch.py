"""Batch text ingest (document_texts_ingest): many texts, one document each, the same stages, charges and dedup."""

from __future__ import annotations

import pytest

from billing.services import credit_balance, credits_grant_admin
from exograph.core.errors import InsufficientCredits, ValidationError
from exograph.core.scope import Scope
from exograph.documents.models import Document, DocumentChunk, DocumentStatus
from exograph.documents.services import (
    TextIn,
    document_text_ingest,
    document_texts_ingest,
    documents_batch_process,
)
from exograph.graphs import retrieval, store
from exograph.graphs.models import GraphKind
from exograph.graphs.services import graph_default_for_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("drop_graph_stores")]

TEXTS = [
    ("Acme Robotics", "Acme Robotics acquired Beta Motors in 2019 for its electric drive team."),
    ("Beta Motors", "Beta Motors builds the Comet scooter in Lyon."),
    ("Lyon", "Lyon is a city in France on the Rhone."),
]


@pytest.fixture
def graph(alice):
    credits_grant_admin(account=alice, amount=1000, actor=None, note="tests")
    return graph_default_for_user(actor=alice, scope=Scope.PRIVATE, kind=GraphKind.DOCUMENT)


def _items(pairs, prefix="k"):
    return [TextIn(title=t, text=x, idempotency_key=f"{prefix}-{n}") for n, (t, x) in enumerate(pairs)]


def _ingest(alice, graph, capture, texts, *, prefix: str) -> list[str]:
    """(title, text) pairs through the batch ingest, tasks run on commit; the documents' ids in order."""
    with capture(execute=True):
        results = document_texts_ingest(actor=alice, graph=graph, texts=_items(texts, prefix=prefix))
    return [str(document.pk) for document, _ in results]


def test_a_batch_makes_one_processed_document_per_text_charged_each_and_searchable(
    alice, graph, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        results = document_texts_ingest(actor=alice, graph=graph, texts=_items(TEXTS), group=2)
    queued = [c for c in callbacks if "document_texts_ingest" in c.__qualname__]
    assert len(queued) == 2  # one pipeline task per group of 2 documents
    assert [created for _, created in results] == [True, True, True]
    documents = [Document.objects.get(pk=d.pk) for d, _ in results]
    assert all(d.status == DocumentStatus.PROCESSED and d.progress == 100 for d in documents), [
        (d.status, d.failure_reason) for d in documents
    ]
    assert [d.title for d in documents] == [t for t, _ in TEXTS]
    assert all(d.credits_charged == 6 for d in documents)
    assert credit_balance(account=alice) == 1000 - 18
    assert not DocumentChunk.objects.exists()  # stage data is dropped once written, as for one upload
    result = retrieval.retrieve(actor=alice, graphs=[graph], question="Who builds the Comet scooter?", mode="graph")
    passages = [i for i in result.items if i.kind == "passage"]
    assert passages and passages[0].text.startswith("Beta Motors builds the Comet")
    # Titles are entities: the Acme passage names Beta Motors, whose passage is the title entity's.
    assert store.store_entity_key_hits(graph.store_name, keys=["beta motors"], limit=5)


def test_duplicates_in_the_batch_and_in_the_graph_are_one_document_and_free(
    alice, graph, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        first, _ = document_text_ingest(
            actor=alice, graph=graph, title="Lyon", text=TEXTS[2][1], idempotency_key="one", markdown=False
        )
    pairs = [TEXTS[0], TEXTS[0], TEXTS[2]]
    with django_capture_on_commit_callbacks(execute=True):
        results = document_texts_ingest(actor=alice, graph=graph, texts=_items(pairs))
    assert [created for _, created in results] == [True, False, False]
    assert results[0][0].pk == results[1][0].pk and results[2][0].pk == first.pk
    assert Document.objects.count() == 2
    assert credit_balance(account=alice) == 1000 - 12


@pytest.mark.parametrize(
    "bad,code",
    [("", "empty_text"), ("   \n", "empty_text"), ("\x00\x01\x02binary" * 50, "binary_text_file")],
    ids=["empty", "whitespace", "binary"],
)
def test_one_bad_text_refuses_the_whole_batch_naming_it_and_writes_nothing(alice, graph, bad, code):
    pairs = [TEXTS[0], ("Bad", bad)]
    with pytest.raises(ValidationError) as caught:
        document_texts_ingest(actor=alice, graph=graph, texts=_items(pairs))
    assert caught.value.code == code and caught.value.message.startswith("Text 1:")
    assert not Document.objects.exists() and credit_balance(account=alice) == 1000


def test_too_few_credits_for_the_batch_is_a_402_before_anything_is_written(alice, graph):
    credits_grant_admin(account=alice, amount=-990, actor=None, note="tests")
    with pytest.raises(InsufficientCredits) as caught:
        document_texts_ingest(actor=alice, graph=graph, texts=_items(TEXTS))
    assert caught.value.extra == {"needed": 18, "balance": 10}
    assert not Document.objects.exists() and credit_balance(account=alice) == 10


def test_a_retried_group_resumes_each_document_where_it_stopped(alice, graph, django_capture_on_commit_callbacks):
    results = document_texts_ingest(actor=alice, graph=graph, texts=_items(TEXTS))  # on_commit not run: queued only
    ids = [str(d.pk) for d, _ in results]
    assert documents_batch_process(document_ids=ids) == 3
    assert documents_batch_process(document_ids=ids) == 3  # a redelivered task changes nothing
    assert Document.objects.filter(status=DocumentStatus.PROCESSED).count() == 3
    assert credit_balance(account=alice) == 1000 - 18


def test_charlie_cannot_batch_into_alices_graph(alice, charlie, graph):
    from exograph.core.errors import NotFound, PermissionDenied

    credits_grant_admin(account=charlie, amount=1000, actor=None, note="tests")
    with pytest.raises((NotFound, PermissionDenied)):
        document_texts_ingest(actor=charlie, graph=graph, texts=_items(TEXTS))
    assert not Document.objects.exists() and credit_balance(account=charlie) == 1000


def test_titled_chunks_are_embedded_under_their_title_in_batch_single_and_reembed(
    alice, graph, django_capture_on_commit_callbacks
):
    """A passage that never names its subject ("She ...") is embedded with its document's title as a first line,
    the same in the batch path, the one-document path and a graph re-embed; an untitled text is not."""
    import numpy as np

    from exograph.graphs.embeddings import chunk_embedding_text, get_embedder
    from exograph.graphs.services import graph_reembed

    text = "She discovered polonium and radium in Paris."
    with django_capture_on_commit_callbacks(execute=True):
        ((batched, _),) = document_texts_ingest(
            actor=alice, graph=graph, texts=[TextIn(title="Marie Curie", text=text, idempotency_key="t-1")]
        )
        single, _ = document_text_ingest(
            actor=alice, graph=graph, text=text + " Twice.", title="Marie Curie (chemist)", idempotency_key="t-2"
        )
    embedder = get_embedder()

    def stored(document):  # (chunk text, its vector) as written to the graph
        [(chunk_text, vector)] = store.ro_query(
            graph.store_name,
            "MATCH (c:Chunk {document_id: $doc}) MATCH (v:ChunkVector {key: c.vkey}) RETURN c.text, v.embedding",
            {"doc": str(document.pk)},
        )
        return chunk_text, np.array(vector, dtype=float)

    for document, title in ((batched, "Marie Curie"), (single, "Marie Curie (chemist)")):
        chunk_text, vector = stored(document)
        assert np.allclose(vector, embedder.embed([f"{title}\n{chunk_text}"])[0], atol=1e-5), title
        assert not np.allclose(vector, embedder.embed([chunk_text])[0], atol=1e-3)
    assert chunk_embedding_text("Marie Curie was a chemist.", title="Marie Curie") == "Marie Curie was a chemist."
    assert chunk_embedding_text("Some text.", title="  ") == "Some text."
    question = embedder.embed_one("Who discovered radium? Marie Curie")
    before = store.store_chunk_vector_hits(graph.store_name, vector=question, k=2)
    graph_reembed(graph=graph)
    after = store.store_chunk_vector_hits(graph.store_name, vector=question, k=2)
    assert [c for c, _ in after] == [c for c, _ in before]
    assert [round(s, 4) for _, s in after] == [round(s, 4) for _, s in before]


_DIRECTORS = (
    ("Ann Lee", "Ohio"),
    ("Bo Kim", "Texas"),
    ("Cy Dunn", "Maine"),
    ("Di Roe", "Utah"),
    ("Ed Poe", "Iowa"),
    ("Flo Ng", "Idaho"),
    ("Gus Orr", "Kansas"),
    ("Hal Ives", "Nevada"),
)


def _look_alike_directors(genre: str, count: int) -> list[tuple[str, str]]:
    """(title, text) of count directors whose passages look more like a "where was the director born" question
    than the real director's does."""
    return [
        (f"Director {name}", f"{name} is a film director who was born in {town} and directed {genre} films.")
        for name, town in _DIRECTORS[:count]
    ]


def _film_and_director(alice, graph, capture, *, film_title: str, director_title: str) -> tuple[str, str]:
    """Ingest (real pipeline) a film whose passage writes "James Fargo", his own passage that never writes his
    name, and four look-alike directors; returns the film's and the director's document ids."""
    texts = [
        (film_title, "Forced Vengeance is a 1982 American action film directed by James Fargo."),
        (director_title, "He was born in Republic, Washington, and began as an assistant on westerns."),
        *_look_alike_directors("action", 4),
    ]
    film, director, *_ = _ingest(alice, graph, capture, texts, prefix=director_title)
    return film, director


def _top_passages(alice, graph, question: str, *, mode: str, n: int) -> list[str]:
    result = retrieval.retrieve(actor=alice, graphs=[graph], question=question, mode=mode, top_k=5)
    return [item.document_id for item in result.items if item.kind == "passage"][:n]


def test_graph_mode_walks_from_a_titled_passage_to_the_one_titled_by_the_name_it_writes(
    alice, graph, django_capture_on_commit_callbacks
):
    """Text documents through the real pipeline: the film's passage writes its director's name, and the director's
    own passage (titled by that name) never names the film. Graph mode reaches it from the film's title in the
    question; passages alone rank look-alike directors above it."""
    film, director = _film_and_director(
        alice, graph, django_capture_on_commit_callbacks, film_title="Forced Vengeance", director_title="James Fargo"
    )
    question = "Where was the director of film Forced Vengeance born?"
    assert set(_top_passages(alice, graph, question, mode="graph", n=2)) == {film, director}
    assert director not in _top_passages(alice, graph, question, mode="passages", n=2)


def test_graph_mode_links_a_written_name_to_the_document_titled_by_it_with_a_qualifier(
    alice, graph, django_capture_on_commit_callbacks, monkeypatch
):
    """Wikipedia-style titles: the film's passage writes "James Fargo", the director's document is titled
    "James Fargo (director)" and its passage never writes his name. The bare name links the two; without that
    link the look-alike directors rank above him. The question names the film with its qualifier."""
    film, director = _film_and_director(
        alice,
        graph,
        django_capture_on_commit_callbacks,
        film_title="Forced Vengeance (1982 film)",
        director_title="James Fargo (director)",
    )
    question = "Where was the director of film Forced Vengeance (1982 Film) born?"

    def top(n: int) -> list[str]:
        return _top_passages(alice, graph, question, mode="graph", n=n)

    assert set(top(2)) == {film, director}
    from exograph.graphs.retrieval import graph_mode
    from exograph.graphs.types import normalize_name

    # graph mode reads a title's keys through its memo (_title_keys, 0477f75): the title's full name only
    monkeypatch.setattr(graph_mode, "_title_keys", lambda title: (normalize_name(title),))
    assert director not in top(2)


def _bare_title_chain(alice, graph, capture) -> tuple[str, str]:
    """A film titled "Kadal (1968 film)" whose passage never writes "Kadal" but names its director, the director's
    own passage (titled by his name), and eight look-alike directors."""
    texts = [
        ("Kadal (1968 film)", "It is a Malayalam drama released in 1968 and directed by M. Krishnan Nair."),
        ("M. Krishnan Nair", "Nair grew up in Thiruvananthapuram and began as an assistant in the Madras studios."),
        *_look_alike_directors("drama", 8),
    ]
    film, director, *_ = _ingest(alice, graph, capture, texts, prefix="kadal")
    return film, director


def test_a_question_naming_a_title_without_its_qualifier_links_to_that_document(
    alice, graph, django_capture_on_commit_callbacks
):
    """Questions name "Kadal (1968 film)" as "Kadal": the title entity carries the bare name as an alias, so graph
    mode seeds the film from it and walks on to the director it names."""
    question = "Where was the director of Kadal born?"
    film, director = _bare_title_chain(alice, graph, django_capture_on_commit_callbacks)
    [(aliases,)] = store.ro_query(
        graph.store_name, "MATCH (e:Entity {normalized_name: 'kadal (1968 film)'}) RETURN e.alias_keys", {}
    )
    assert "kadal" in aliases
    assert set(_top_passages(alice, graph, question, mode="graph", n=2)) == {film, director}
    # The seed is the alias's title entity: it carries the most mass of the evidence's entities.
    result = retrieval.retrieve(actor=alice, graphs=[graph], question=question, mode="graph", top_k=5)
    entities = [item for item in result.items if item.kind == "entity"]
    assert entities[0].text.startswith("Kadal (1968 film)")


def test_an_alias_shared_by_several_titles_links_the_question_to_each(alice, graph, django_capture_on_commit_callbacks):
    """Two albums titled "III (...)": the question's "III" links to both names."""
    texts = [
        ("III (Stanton Moore album)", "The third record by the drummer, released in 2006 on Telarc."),
        ("III (Sabaton album)", "A Swedish metal record of 2003 about battles."),
    ]
    _ingest(alice, graph, django_capture_on_commit_callbacks, texts, prefix="iii")
    found = store.store_alias_names(graph.store_name, keys=["iii", "nothing"], limit=10, per_key=5)
    assert set(found) == {"iii"}
    assert sorted(found["iii"]) == ["iii (sabaton album)", "iii (stanton moore album)"]
    # Equally supported names come in name order; per_key cuts the list.
    assert store.store_alias_names(graph.store_name, keys=["iii"], limit=10, per_key=1) == {
        "iii": ["iii (sabaton album)"]
    }


def test_a_question_key_that_is_a_name_does_not_also_link_to_titles_it_is_the_alias_of(
    alice, graph, django_capture_on_commit_callbacks
):
    """ "Paris" is the city's own title and the alias of "Paris (film)": a question about Paris seeds the city alone.
    Linked to the film too, the film's one passage (the rarest name) would take most of the seed mass."""
    texts = [
        ("Paris", "The capital of France has about two million inhabitants within its city limits."),
        ("Paris (film)", "A French drama released in 2008, written and directed by Cedric Klapisch."),
        ("Louvre", "The Louvre is the most visited museum in Paris and holds the Mona Lisa."),
        ("Seine", "The Seine flows through Paris before it reaches the English Channel at Le Havre."),
    ]
    city, film, *_ = _ingest(alice, graph, django_capture_on_commit_callbacks, texts, prefix="paris")
    result = retrieval.retrieve(
        actor=alice, graphs=[graph], question="How many people live in Paris?", mode="graph", top_k=5
    )
    entities = [item.text for item in result.items if item.kind == "entity"]
    assert entities[0].startswith("Paris (")  # "Paris (concept): The subject of the document titled Paris."
    assert not entities[0].startswith("Paris (film)")
    passages = [item.document_id for item in result.items if item.kind == "passage"]
    assert passages[0] == city and passages.index(film) > passages.index(city)


@pytest.mark.django_db(transaction=True)
def test_a_batch_sends_each_documents_progress_coalesced_and_ends_on_processed(alice, graph, monkeypatch):
    """Issue 29: a group's documents' progress goes out in a few calls carrying many documents (not one Redis and
    channel-layer round trip per change), and each document's last event is its processed state."""
    from exograph.documents import events

    calls: list[list[dict]] = []
    monkeypatch.setattr(events, "user_events_send", lambda user_id, sent: calls.append(list(sent)) or [])
    monkeypatch.setattr(events, "user_event_send", lambda user_id, event: calls.append([event]) or "")
    results = document_texts_ingest(actor=alice, graph=graph, texts=_items(TEXTS, prefix="events"))
    ids = [str(document.pk) for document, _ in results]
    assert Document.objects.filter(pk__in=ids, status=DocumentStatus.PROCESSED).count() == len(ids)
    last = {}
    for call in calls:
        for event in call:
            assert event["type"] == "document.progress"
            last[event["document"]["id"]] = event["document"]
    assert sorted(last) == sorted(ids)
    assert all(d["status"] == "processed" and d["progress"] == 100 for d in last.values()), last
    assert max(len(call) for call in calls) == len(ids)  # the group's documents share a send
    assert len(calls) <= 5  # one per step of the group, not ~8 per document


AHEAD_TEXTS = [
    ("Orla Penhallow", "Orla Penhallow charted the Skerrow Banks for the Vennick Harbour Trust in 1871."),
    ("Skerrow Banks", "The Skerrow Banks lie off Quellin Point, where the Marrow Light warns pilots."),
    ("Vennick Harbour Trust", "The Vennick Harbour Trust hired Tobin Aske to rebuild the Quellin Point pier."),
    ("Marrow Light", "The Marrow Light was lit by Edda Coyle of Gallan Sound in 1880."),
]


def test_a_groups_entity_texts_are_embedded_beside_its_extraction_once_each(
    alice, graph, monkeypatch, django_capture_on_commit_callbacks
):
    """The entity texts of the documents already extracted are embedded while the group's extraction goes on (the
    embedder beside the extraction, not after it: issue 29 §5); each text is embedded once, and each entity's
    vector in the graph is its text's own."""
    import threading

    import numpy as np

    from exograph.documents.services import batch, batch_embed
    from exograph.graphs.embeddings import get_embedder
    from exograph.graphs.services import ingest as graph_ingest

    embedder = get_embedder()
    real_embed = type(embedder).embed
    real_extract = batch.document_extract
    calls: list[list[str]] = []
    names_embedded = threading.Event()  # an entity text of this group went to the embedder
    waited: list[bool] = []

    def spying_embed(self, texts):  # type: ignore[no-untyped-def]
        calls.append(list(texts))
        if len(calls) > 1:  # the first call is the group's chunks
            names_embedded.set()
        return real_embed(self, texts)

    def last_waits(chunks, **kwargs):  # type: ignore[no-untyped-def]
        if any("Edda Coyle" in chunk.text for chunk in chunks):  # the group's last document
            waited.append(names_embedded.wait(timeout=20))
        return real_extract(chunks, **kwargs)

    monkeypatch.setattr(type(embedder), "embed", spying_embed)
    monkeypatch.setattr(batch, "document_extract", last_waits)
    monkeypatch.setattr(batch_embed, "AHEAD_TEXTS", 1)
    graph_ingest._entity_vectors.clear()
    ids = _ingest(alice, graph, django_capture_on_commit_callbacks, AHEAD_TEXTS, prefix="ahead")

    assert Document.objects.filter(pk__in=ids, status=DocumentStatus.PROCESSED).count() == len(AHEAD_TEXTS)
    assert waited == [True]  # names were embedded before the last document's extraction started
    entity_texts = [text for call in calls[1:] for text in call]
    assert entity_texts and len(entity_texts) == len(set(entity_texts))  # none embedded twice
    rows = store.ro_query(
        graph.store_name,
        "MATCH (e:Entity) WHERE e.name IN $names MATCH (v:EntityVector {entity_id: e.id}) RETURN e.name, v.embedding",
        {"names": ["Tobin Aske", "Edda Coyle", "Gallan Sound"]},
    )
    assert {name for name, _ in rows} == {"Tobin Aske", "Edda Coyle", "Gallan Sound"}
    for name, vector in rows:
        assert np.allclose(vector, real_embed(embedder, [name])[0], atol=1e-5), name


def test_a_fault_embedding_later_entity_texts_leaves_earlier_documents_indexed_and_the_rest_resumable(
    alice, graph, monkeypatch
):
    """Issue 29 §5: a group's index stages run while its later documents' entity texts are still embedded on the
    embedder thread. The embedder failing there (transient, attempts left) stops the group for Celery's retry with
    the documents before it processed and the rest parked at their index stage (chunks embedded, extraction saved,
    nothing of them in the graph, a lease to resume them); the retry finishes them, each charged once."""
    from exograph.core.errors import TransientError
    from exograph.core.models import Lease
    from exograph.documents.models import DocumentBlob
    from exograph.documents.services import batch_embed
    from exograph.documents.services.state import DOCUMENT_LEASE
    from exograph.graphs.embeddings import get_embedder
    from exograph.graphs.services import ingest as graph_ingest

    embedder = get_embedder()
    real_embed = type(embedder).embed
    down = [True]

    def embed(self, texts):  # type: ignore[no-untyped-def]
        if down[0] and any(t == "Tobin Aske" or t.startswith("Tobin Aske.") for t in texts):  # the 3rd text's name
            raise TransientError("The embedder is briefly unavailable.", code="embedding_unavailable")
        return real_embed(self, texts)

    monkeypatch.setattr(type(embedder), "embed", embed)
    monkeypatch.setattr(batch_embed, "AHEAD_TEXTS", 1)  # each document's entity texts in a call of their own
    graph_ingest._entity_vectors.clear()
    results = document_texts_ingest(actor=alice, graph=graph, texts=_items(AHEAD_TEXTS, prefix="fault"))
    ids = [str(document.pk) for document, _ in results]  # queued only: on_commit did not run

    with pytest.raises(TransientError):
        documents_batch_process(document_ids=ids, last_attempt=False)

    status = dict(Document.objects.filter(pk__in=ids).values_list("pk", "status"))
    assert [status[d.pk] for d, _ in results] == [DocumentStatus.PROCESSED] * 2 + [DocumentStatus.PROCESSING] * 2
    rest = ids[2:]
    assert not DocumentChunk.objects.filter(document_id__in=rest, embedding__isnull=True).exists()
    assert DocumentChunk.objects.filter(document_id__in=rest).count() == 2
    assert DocumentBlob.objects.filter(document_id__in=rest, extraction__isnull=False).count() == 2
    written = store.ro_query(graph.store_name, "MATCH (c:Chunk) RETURN DISTINCT c.document_id")
    assert sorted(row[0] for row in written) == sorted(ids[:2])
    assert Lease.objects.filter(kind=DOCUMENT_LEASE, subject_id__in=rest).count() == 2

    down[0] = False
    assert documents_batch_process(document_ids=ids, last_attempt=False) == 4
    assert credit_balance(account=alice) == 1000 - 4 * 6
    written = store.ro_query(graph.store_name, "MATCH (c:Chunk) RETURN DISTINCT c.document_id")
    assert sorted(row[0] for row in written) == sorted(ids)
