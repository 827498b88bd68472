"""A batch group's extraction: one pass of the NER model over the group, each document's result as if alone."""

from __future__ import annotations

from typing import Any

import pytest

from exograph.documents.extraction import document_extract, extraction_to_json
from exograph.documents.extraction.ner import ner_model
from exograph.documents.services.batch import _extractions
from exograph.documents.services.stages import ChunkText

GROUP = {
    "d1": [
        ChunkText(id="d1-0", text="Mirela Oprescu founded the Danube Rowing Society in Galati in March 1931."),
        ChunkText(id="d1-1", text="The society later moved to Braila, where Oprescu coached until 1952."),
    ],
    "d2": [ChunkText(id="d2-0", text="Tomas Havlik painted The Salt Barges, shown at the Prague Spring Salon.")],
    "d3": [ChunkText(id="d3-0", text="About 40% of the harbour's 2,000 workers joined the Dockers' Union.")],
    # the same passage as d2's: one reading, two documents
    "d4": [ChunkText(id="d4-0", text="Tomas Havlik painted The Salt Barges, shown at the Prague Spring Salon.")],
}


@pytest.fixture
def model_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many texts each call of the NER model's pipe reads."""
    nlp = ner_model()
    assert nlp is not None, "the NER model package is a requirement"
    pipe = nlp.pipe
    calls: list[int] = []

    def counted(texts: Any, **kwargs: Any) -> Any:
        texts = list(texts)
        calls.append(len(texts))
        return pipe(texts, **kwargs)

    monkeypatch.setattr(nlp, "pipe", counted)
    return calls


def test_a_groups_documents_are_read_by_the_model_in_one_pass_with_each_result_as_alone(model_calls) -> None:
    alone = {key: extraction_to_json(document_extract(chunks)) for key, chunks in GROUP.items()}
    assert len(model_calls) == len(GROUP)
    model_calls.clear()

    grouped = _extractions(GROUP)

    assert model_calls == [4]  # four distinct passages, one pass
    assert {key: extraction_to_json(found) for key, found in grouped.items()} == alone
    assert any(e.name == "Mirela Oprescu" for e in grouped["d1"].entities)


def test_a_failed_group_pass_leaves_each_document_to_read_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    nlp = ner_model()
    assert nlp is not None
    pipe = nlp.pipe
    attempted: list[int] = []

    def fails_on_a_group(texts: Any, **kwargs: Any) -> Any:
        texts = list(texts)
        if len(texts) > 2:
            attempted.append(len(texts))
            raise RuntimeError("the group pass broke")
        return pipe(texts, **kwargs)

    monkeypatch.setattr(nlp, "pipe", fails_on_a_group)
    grouped = _extractions(GROUP)
    assert attempted == [4]
    assert set(grouped) == set(GROUP)
    assert any(e.name == "Tomas Havlik" for e in grouped["d2"].entities)


def test_a_worker_process_loads_the_ner_model_at_start(settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from exograph import celery
    from exograph.graphs import embeddings

    settings.EMBEDDING_WARM_START = True
    monkeypatch.setattr(embeddings, "embedder_warm", lambda: None)
    ner_model.cache_clear()
    celery._embedder_warm_at_process_init()
    assert ner_model.cache_info().currsize == 1
