"""Every typed model of exograph_client declares every field the REST answer it reads carries (the OpenAPI
schema, made from the serializers): a field the server adds must not live only in the model's untyped extras,
where an editor, mypy and the client's README cannot see it (the Document had no `refunded`)."""

from __future__ import annotations

from typing import Any

import pytest
from exograph_client import models

# Client model -> the schema components whose properties it must declare (the answers it is validated from).
READS = {
    models.Graph: ["GraphOut"],
    models.GraphCounts: ["GraphCounts"],
    models.DocumentSummary: ["DocumentListItemOut"],
    models.Document: ["DocumentOut", "DocumentUploadOut"],
    models.DocumentFailure: ["DocumentFailureOut"],
    models.DocumentWarning: ["DocumentWarningOut"],
    models.Quote: ["QuoteOut"],
    models.UploadQuote: ["DocumentUploadQuoteOut"],
    models.ImportQuote: ["ImportQuoteOut"],
    models.ResearchQuote: ["ResearchQuoteOut"],
    models.ImportResult: ["ImportOut"],
    models.EntityHit: ["EntityHit"],
    models.SearchResult: ["EntitySearchOut"],
    models.Entity: ["WorldEntity"],
    models.RelatedEntity: ["RelatedEntity"],
    models.RelationEvidence: ["Evidence"],
    models.Evidence: ["EvidenceOut"],
    models.Retrieval: ["RetrieveOut"],
    models.Citations: ["CitationsOut"],
    models.ChatAnswer: ["SendOut"],
    models.ResearchProgress: ["ProgressOut"],
    models.Finding: ["FindingOut"],
    models.ReportSource: ["ReportSourceOut"],
    models.Report: ["ReportOut"],
    models.ResearchSession: ["ResearchOut", "ResearchCreatedOut", "ResearchSummaryOut"],
    models.Balance: ["BalanceOut"],
}


@pytest.fixture(scope="module")
def components() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]


@pytest.mark.parametrize("model", list(READS), ids=lambda m: m.__name__)
def test_the_client_model_declares_every_field_of_its_answers(model, components) -> None:  # type: ignore[no-untyped-def]
    for name in READS[model]:
        served = set(components[name].get("properties", {}))
        missing = served - set(model.model_fields)
        assert not missing, f"{model.__name__} lacks {sorted(missing)} of {name}"


def test_a_refunded_document_says_what_came_back() -> None:
    charged = {"id": "d1", "status": "cancelled", "credits_charged": 7, "refunded": True}
    document = models.Document.model_validate(charged)
    assert document.refunded is True
    assert document.credits_refunded == 7
    kept = models.Document.model_validate({**charged, "status": "processed", "refunded": False})
    assert kept.credits_refunded == 0


@pytest.mark.django_db(transaction=True)
def test_a_research_dry_run_is_a_quote_and_start_refuses_one(live_url, alice_key) -> None:  # type: ignore[no-untyped-def]
    from exograph_client import Client

    with Client(live_url, api_key=alice_key) as exo:
        quote = exo.research.quote("heat pumps in terraced houses", budget_credits=40)
        assert isinstance(quote, models.ResearchQuote)
        assert quote.dry_run and quote.credits_needed > 0 and quote.model
        with pytest.raises(ValueError, match=r"research\.quote"):
            exo.research.start("heat pumps in terraced houses", dry_run=True)
        assert list(exo.research.list()) == []
