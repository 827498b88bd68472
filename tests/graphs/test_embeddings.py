"""Embedding providers: the real bundled local model, and the openai provider against a fake OpenAI API."""

from __future__ import annotations

import math
import threading

import pytest

from exograph.core.errors import PermanentError, TransientError
from exograph.graphs import embeddings
from exograph.graphs.embeddings import (
    LOCAL_NAME,
    Embedder,
    LocalEmbedder,
    OpenAIEmbedder,
    embedder_for,
    get_embedder,
)
from tests.fakes.openai_server import FakeOpenAIServer, fake_vector, openai_error


def norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def assert_close(a: list[list[float]], b: list[list[float]], tol: float = 1e-5) -> None:
    assert len(a) == len(b)
    for u, v in zip(a, b, strict=True):
        assert len(u) == len(v)
        assert max(abs(x - y) for x, y in zip(u, v, strict=True)) < tol


# --- local ------------------------------------------------------------------------------------


@pytest.fixture
def local(settings) -> Embedder:  # type: ignore[no-untyped-def]
    settings.EMBEDDING_PROVIDER = "local"
    return get_embedder()


def test_local_is_the_default_and_a_process_wide_singleton(local: Embedder) -> None:
    assert isinstance(local, LocalEmbedder)
    assert isinstance(local, Embedder)
    assert local.name == "local:all-MiniLM-L6-v2" == LOCAL_NAME
    assert local.dimension == 384
    assert get_embedder() is local
    local.embed_one("load it")
    model = local._model  # type: ignore[attr-defined]
    local.embed(["and again"])
    assert local._model is model  # type: ignore[attr-defined]


def test_local_vectors_are_384_dimensional_and_unit_length(local: Embedder) -> None:
    vectors = local.embed(["Marie Curie discovered polonium.", "Paris is the capital of France."])
    assert [len(v) for v in vectors] == [384, 384]
    for vector in vectors:
        assert all(isinstance(x, float) for x in vector)
        assert norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_local_similar_texts_score_higher_than_unrelated_ones(local: Embedder) -> None:
    cat, kitten, revenue, feline = local.embed(
        [
            "A cat is sitting on the mat.",
            "A kitten rests on a rug.",
            "Quarterly revenue grew by ten percent.",
            "Domestic cats are small carnivorous mammals.",
        ]
    )
    assert dot(cat, kitten) > dot(cat, revenue)
    assert dot(feline, cat) > dot(feline, revenue)
    query = local.embed_one("pets")
    assert dot(query, cat) > dot(query, revenue)


def test_local_preserves_order_and_batching_matches_one_by_one(local: Embedder, settings) -> None:  # type: ignore[no-untyped-def]
    texts = [
        "Short.",
        "A considerably longer sentence about rivers, mountains and the history of trade routes.",
        "Graphs connect entities through relations.",
        "",
        "   ",
        "Zebra",
        "Proteins fold into three-dimensional structures.",
    ]
    one_by_one = [local.embed_one(text) for text in texts]
    settings.EMBEDDING_BATCH_SIZE = 3
    in_batches_of_three = local.embed(texts)
    settings.EMBEDDING_BATCH_SIZE = 64
    in_one_batch = local.embed(texts)
    assert_close(in_batches_of_three, one_by_one)
    assert_close(in_one_batch, one_by_one)
    reversed_vectors = local.embed(list(reversed(texts)))
    assert_close(list(reversed(reversed_vectors)), one_by_one)


def test_local_batches_group_texts_of_similar_length(local: Embedder, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A batch pads to its longest text: one call's texts go to the model shortest first, so short entity names
    are not padded to a long title's length (issue 29), and each vector still comes back in its text's place."""
    assert isinstance(local, LocalEmbedder)
    model = local._loaded()
    sent: list[list[str]] = []
    real_tokenize = model.tokenize  # what each forward pass reads, on ONNX Runtime or torch

    def spying_tokenize(batch, **kwargs):  # type: ignore[no-untyped-def]
        sent.append(list(batch))
        return real_tokenize(batch, **kwargs)

    monkeypatch.setattr(model, "tokenize", spying_tokenize)
    texts = ["A long sentence about rivers, mountains and trade routes.", "Ada", "A longer name here", "Bo"]
    settings.EMBEDDING_BATCH_SIZE = 2
    vectors = local.embed(texts)
    assert sent == [["Bo", "Ada"], ["A longer name here", "A long sentence about rivers, mountains and trade routes."]]
    assert_close(vectors, [local.embed_one(text) for text in texts])


def test_local_batches_are_ordered_by_word_pieces_not_characters(local: Embedder, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A pass pads to its longest text in word pieces: a long word of few pieces goes before a short text of many
    (issue 29 §5: 2Wiki's entity names padded 29% less than in character order), each vector in its place."""
    assert isinstance(local, LocalEmbedder)
    model = local._loaded()
    sent: list[list[str]] = []
    real_tokenize = model.tokenize

    def spying_tokenize(batch, **kwargs):  # type: ignore[no-untyped-def]
        sent.append(list(batch))
        return real_tokenize(batch, **kwargs)

    monkeypatch.setattr(model, "tokenize", spying_tokenize)
    texts = ["a b c d e f g", "internationalization", "Ada"]
    pieces = [local.count_tokens(text) for text in texts]
    assert pieces[2] < pieces[1] < pieces[0] and len(texts[1]) > len(texts[0])  # the characters say the other order
    settings.EMBEDDING_BATCH_SIZE = 1
    vectors = local.embed(texts)
    assert sent == [["Ada"], ["internationalization"], ["a b c d e f g"]]
    assert_close(vectors, [local.embed_one(text) for text in texts])


def test_local_forward_passes_hold_a_bounded_number_of_texts(local: Embedder, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """However large EMBEDDING_BATCH_SIZE is (it also sizes a remote provider's requests), the local model reads at
    most LOCAL_BATCH_MAX texts a pass: fewer texts padded to the longest of each batch."""
    from exograph.graphs.embeddings import LOCAL_BATCH_MAX

    assert isinstance(local, LocalEmbedder)
    model = local._loaded()
    sizes: list[int] = []
    real_tokenize = model.tokenize  # what each forward pass reads, on ONNX Runtime or torch

    def spying_tokenize(batch, **kwargs):  # type: ignore[no-untyped-def]
        sizes.append(len(batch))
        return real_tokenize(batch, **kwargs)

    monkeypatch.setattr(model, "tokenize", spying_tokenize)
    settings.EMBEDDING_BATCH_SIZE = 64
    texts = [f"Harbour pilot log entry {n}: " + "tide and wind " * (n % 7) for n in range(40)]
    vectors = local.embed(texts)
    assert sizes and max(sizes) <= LOCAL_BATCH_MAX < 40 and sum(sizes) == 40
    assert_close(vectors[:3], [local.embed_one(text) for text in texts[:3]])


def test_local_empty_input_whitespace_and_very_long_texts(local: Embedder) -> None:
    assert local.embed([]) == []
    blank, spaces, long_text = local.embed(["", " \n\t ", "knowledge graph " * 5000])
    for vector in (blank, spaces, long_text):
        assert len(vector) == 384
        assert all(math.isfinite(x) for x in vector)
    assert norm(long_text) == pytest.approx(1.0, abs=1e-5)
    # Truncated at max_seq_length: the tail of a long text does not change its vector.
    assert_close([local.embed_one("knowledge graph " * 5000 + "zebra")], [long_text])


def test_local_model_loads_once_under_concurrent_first_use(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    embedder = LocalEmbedder()
    loads: list[int] = []
    real_load = embedder._load

    def counting_load():  # type: ignore[no-untyped-def]
        loads.append(1)
        return real_load()

    monkeypatch.setattr(embedder, "_load", counting_load)
    barrier = threading.Barrier(4)
    results: list[list[float]] = [[] for _ in range(4)]
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            barrier.wait()
            results[i] = embedder.embed_one("the same sentence")
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(loads) == 1
    assert_close(results, [results[0]] * 4)


def test_embedder_for_local_name_is_the_singleton(local: Embedder) -> None:
    assert embedder_for(LOCAL_NAME) is local


# --- openai ---------------------------------------------------------------------------------


def expected(texts: list[str], dimension: int = 16) -> list[list[float]]:
    vectors = []
    for text in texts:
        raw = fake_vector(text, dimension)
        n = norm(raw)
        vectors.append([x / n for x in raw])
    return vectors


def test_openai_provider_is_chosen_by_settings_and_reused(openai_embeddings: FakeOpenAIServer) -> None:
    embedder = get_embedder()
    assert isinstance(embedder, OpenAIEmbedder)
    assert isinstance(embedder, Embedder)
    assert embedder.name == "openai:text-embedding-3-small"
    assert embedder.dimension == 16
    assert get_embedder() is embedder
    assert embedder_for("openai:text-embedding-3-small") is embedder
    assert embedder_for(LOCAL_NAME) is embeddings._local_embedder()
    assert openai_embeddings.api_key not in repr(embedder)


def test_openai_sends_the_real_request_and_normalises(openai_embeddings: FakeOpenAIServer) -> None:
    texts = ["alpha", "beta gamma"]
    vectors = get_embedder().embed(texts)
    assert_close(vectors, expected(texts), tol=1e-9)
    for vector in vectors:
        assert norm(vector) == pytest.approx(1.0, abs=1e-9)
    (request,) = openai_embeddings.embedding_requests
    assert request.method == "POST"
    assert request.header("Authorization") == f"Bearer {openai_embeddings.api_key}"
    assert request.header("Content-Type") == "application/json"
    assert request.json() == {"model": "text-embedding-3-small", "input": ["alpha", "beta gamma"]}


def test_openai_batches_by_the_batch_size_and_keeps_order(openai_embeddings: FakeOpenAIServer, settings) -> None:  # type: ignore[no-untyped-def]
    settings.EMBEDDING_BATCH_SIZE = 3
    texts = [f"text number {i}" for i in range(7)]
    vectors = get_embedder().embed(texts)
    assert_close(vectors, expected(texts), tol=1e-9)
    assert [r.json()["input"] for r in openai_embeddings.embedding_requests] == [texts[0:3], texts[3:6], texts[6:7]]


def test_openai_sorts_by_index(openai_embeddings: FakeOpenAIServer) -> None:
    openai_embeddings.reverse_order = True
    texts = ["first", "second", "third"]
    assert_close(get_embedder().embed(texts), expected(texts), tol=1e-9)


def test_openai_empty_list_makes_no_request_and_empty_text_is_sent_as_a_space(
    openai_embeddings: FakeOpenAIServer,
) -> None:
    embedder = get_embedder()
    assert embedder.embed([]) == []
    assert openai_embeddings.requests == []
    vectors = embedder.embed(["", "word"])
    assert_close(vectors, expected([" ", "word"]), tol=1e-9)
    assert openai_embeddings.embedding_requests[0].json()["input"] == [" ", "word"]


def test_openai_cuts_very_long_texts(openai_embeddings: FakeOpenAIServer) -> None:
    get_embedder().embed_one("x" * 20_000)
    sent = openai_embeddings.embedding_requests[0].json()["input"][0]
    assert sent == "x" * embeddings.OPENAI_MAX_INPUT_CHARS


def test_openai_sends_dimensions_only_when_asked(openai_embeddings: FakeOpenAIServer, settings) -> None:  # type: ignore[no-untyped-def]
    settings.EMBEDDING_OPENAI_SEND_DIMENSIONS = True
    settings.EMBEDDING_OPENAI_DIMENSION = 8
    embedder = get_embedder()
    assert embedder.dimension == 8
    vector = embedder.embed_one("short vectors")
    assert len(vector) == 8
    assert openai_embeddings.embedding_requests[0].json()["dimensions"] == 8


def test_openai_dimension_mismatch_is_a_permanent_error_naming_both(openai_embeddings: FakeOpenAIServer) -> None:
    openai_embeddings.wrong_dimension = 10
    with pytest.raises(PermanentError) as caught:
        get_embedder().embed(["anything"])
    assert caught.value.code == "embedding_dimension_mismatch"
    assert "10-dimensional" in caught.value.message
    assert "EMBEDDING_OPENAI_DIMENSION is 16" in caught.value.message
    assert "EMBEDDING_OPENAI_DIMENSION=10" in caught.value.hint


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_openai_server_errors_and_rate_limits_are_transient(openai_embeddings: FakeOpenAIServer, status: int) -> None:
    openai_embeddings.fail_next(status, openai_error("The server is overloaded."), headers={"Retry-After": "7"})
    with pytest.raises(TransientError) as caught:
        get_embedder().embed(["anything"])
    error = caught.value
    assert error.status == 503
    assert error.code == "embedding_unavailable"
    assert f"127.0.0.1:{openai_embeddings.port}" in error.message
    assert "openai:text-embedding-3-small" in error.message
    assert str(status) in error.message
    assert "The server is overloaded." in error.message
    assert error.headers == {"Retry-After": "7"}
    # The next call succeeds again: nothing is stuck.
    assert len(get_embedder().embed_one("recovered")) == 16


def test_openai_wrong_key_is_permanent_with_the_providers_message(
    openai_embeddings: FakeOpenAIServer, settings
) -> None:  # type: ignore[no-untyped-def]
    settings.EMBEDDING_OPENAI_API_KEY = "sk-wrong-key-123456"
    with pytest.raises(PermanentError) as caught:
        get_embedder().embed(["anything"])
    error = caught.value
    assert error.code == "embedding_auth_failed"
    assert "401" in error.message
    assert "Incorrect API key provided" in error.message
    assert "EMBEDDING_OPENAI_API_KEY" in error.hint
    assert openai_embeddings.embedding_requests[0].header("Authorization") == "Bearer sk-wrong-key-123456"


def test_openai_forbidden_is_permanent(openai_embeddings: FakeOpenAIServer) -> None:
    openai_embeddings.fail_next(403, openai_error("You are not allowed to use this model."))
    with pytest.raises(PermanentError) as caught:
        get_embedder().embed(["anything"])
    assert caught.value.code == "embedding_auth_failed"
    assert "You are not allowed to use this model." in caught.value.message


def test_openai_bad_request_is_permanent_with_the_providers_message(openai_embeddings: FakeOpenAIServer) -> None:
    openai_embeddings.fail_next(400, openai_error("The model `nope` does not exist.", code="model_not_found"))
    with pytest.raises(PermanentError) as caught:
        get_embedder().embed(["anything"])
    assert caught.value.code == "embedding_failed"
    assert "400" in caught.value.message
    assert "The model `nope` does not exist." in caught.value.message


def test_openai_non_json_error_body_is_reported(openai_embeddings: FakeOpenAIServer) -> None:
    openai_embeddings.fail_next(502, "<html>Bad Gateway</html>")
    with pytest.raises(TransientError) as caught:
        get_embedder().embed(["anything"])
    assert "Bad Gateway" in caught.value.message


def test_openai_malformed_success_is_permanent(openai_embeddings: FakeOpenAIServer) -> None:
    openai_embeddings.fail_next(200, {"object": "list", "data": [{"index": 0}]})
    with pytest.raises(PermanentError) as caught:
        get_embedder().embed(["anything"])
    assert "malformed" in caught.value.message

    openai_embeddings.fail_next(200, {"object": "list", "data": []})
    with pytest.raises(PermanentError) as caught:
        get_embedder().embed(["anything"])
    assert "returned 0 vectors for 1 texts" in caught.value.message


def test_openai_unreachable_is_transient_naming_the_host(openai_embeddings: FakeOpenAIServer, settings) -> None:  # type: ignore[no-untyped-def]
    closed = FakeOpenAIServer()
    closed.start()
    url, host = closed.base_url, f"127.0.0.1:{closed.port}"
    closed.stop()
    settings.EMBEDDING_OPENAI_BASE_URL = url
    with pytest.raises(TransientError) as caught:
        get_embedder().embed(["anything"])
    assert caught.value.code == "embedding_unavailable"
    assert host in caught.value.message
    assert "unreachable" in caught.value.message
    assert openai_embeddings.api_key not in caught.value.message


def test_openai_timeout_is_transient(openai_embeddings: FakeOpenAIServer, settings) -> None:  # type: ignore[no-untyped-def]
    settings.EMBEDDING_OPENAI_TIMEOUT = 0.2
    openai_embeddings.fail_next(200, delay=2.0)
    with pytest.raises(TransientError) as caught:
        get_embedder().embed(["anything"])
    assert "timed out" in caught.value.message
    assert f"127.0.0.1:{openai_embeddings.port}" in caught.value.message


def test_embedder_for_an_unknown_name_is_refused(openai_embeddings: FakeOpenAIServer) -> None:
    with pytest.raises(PermanentError) as caught:
        embedder_for("openai:text-embedding-ada-002")
    assert caught.value.code == "embedder_unavailable"
    assert "openai:text-embedding-3-small" in caught.value.message
    with pytest.raises(PermanentError):
        embedder_for("cohere:embed-v3")
