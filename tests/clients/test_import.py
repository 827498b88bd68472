"""exograph_client's graphs.import_facts / quote_import against the live service: a CSV file of triples quoted,
imported and found again in the export; a bad row comes back as InvalidRequestError carrying its line."""

from __future__ import annotations

import asyncio
import json

import pytest
from exograph_client import AsyncClient, Client, InvalidRequestError

pytestmark = pytest.mark.django_db(transaction=True)

CSV = (
    "subject,predicate,object,source,evidence\n"
    "Ada Lovelace,wrote,Note G,Sketch of the Analytical Engine,Ada Lovelace wrote Note G in 1843.\n"
    "Charles Babbage,designed,Analytical Engine,,\n"
)


def test_a_csv_of_triples_is_quoted_imported_and_exported(live_url, alice, alice_key, fund, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fund(alice, 20)
    path = tmp_path / "facts.csv"
    path.write_text(CSV, encoding="utf-8")
    with Client(live_url, api_key=alice_key) as exo:
        graph = exo.graphs.create("Imported")
        quote = exo.graphs.quote_import(graph.id, path)
        assert quote.credits_needed == 5 and quote.covered and quote.balance == 20
        result = exo.graphs.import_facts(graph.id, path)
        assert (result.triples, result.entities, result.documents_written) == (2, 4, 2)
        assert result.credits_charged == 5 and result.balance == 15 == exo.balance().balance
        lines = [json.loads(line) for line in exo.graphs.export(graph.id, "jsonl").decode().splitlines()]
        names = {r["id"]: r["name"] for r in lines if r["record"] == "entity"}
        relations = {(names[r["source"]], r["type"], names[r["target"]]) for r in lines if r["record"] == "relation"}
        assert relations == {("Ada Lovelace", "WROTE", "Note G"), ("Charles Babbage", "DESIGNED", "Analytical Engine")}

        with pytest.raises(InvalidRequestError) as bad:
            exo.graphs.import_facts(graph.id, content=CSV + "Ada Lovelace,,Note H,,\n", format="csv")
        assert bad.value.code == "invalid_import_row" and bad.value.extra["line"] == 4
        assert exo.balance().balance == 15


def test_the_async_client_imports_jsonl(live_url, alice, alice_key, fund) -> None:  # type: ignore[no-untyped-def]
    fund(alice, 10)

    async def run() -> tuple[int, int]:
        async with AsyncClient(live_url, api_key=alice_key) as exo:
            graph = await exo.graphs.create("Async import")
            rows = json.dumps({"subject": "Grace Hopper", "predicate": "built", "object": "A-0 System"}) + "\n"
            result = await exo.graphs.import_facts(graph.id, content=rows, format="jsonl")
            return result.triples, result.credits_charged

    assert asyncio.run(run()) == (1, 5)
