"""The explorer of a real PDF (issue 25): uploaded on the web page, processed by the configured extractor, its
overview draws typed entities (people, organisations, places, works, dates…, not all "concept"), the list beside
the canvas names each one's type, and none of the names listed is junk by the extraction report's rule
(bench/extraction_junk.py, imported, not restated); the rule's verdict on every node drawn is printed. Screenshots
of the explorer and of the merge report it links to are saved (PageWatch: axe-core and the clipping check too)."""

from __future__ import annotations

import pytest

from bench.extraction_junk import _stopwords, junk_reason
from tests.documents.conftest import fixtures_dir
from tests.e2e.test_browser import (  # noqa: F401 (fixtures)
    CHROMIUM,
    CHROMIUM_ARGS,
    PageWatch,
    _drop_graph_stores,
    _logged_in_page,
    live_server_url,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# An 8-page NLP paper (Shinyama & Sekine, NAACL 2006): people, universities, places, news events, a text layer.
PDF = "pdf/pm_naacl06-shinyama.pdf"
TYPED = {"PERSON", "ORGANIZATION", "LOCATION", "WORK", "DATE", "EVENT", "PRODUCT", "QUANTITY"}


def test_the_explorer_of_an_uploaded_pdf_shows_typed_entities_and_no_junk(live_server_url, tmp_path) -> None:  # noqa: F811  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect, sync_playwright

    from billing.services import credits_grant_admin
    from exograph.documents.models import Document
    from exograph.graphs import store
    from tests.factories import UserFactory

    fay = UserFactory(email="fay-explorer@example.com")
    credits_grant_admin(account=fay, amount=100, actor=None, note="tests")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            page = _logged_in_page(browser, live_server_url, fay)
            page.set_default_timeout(180_000)  # eager Celery: the whole ingest runs inside the upload request
            watch = PageWatch(page, tmp_path)
            page.goto(f"{live_server_url}/documents/")
            page.set_input_files("#id_file", str(fixtures_dir() / PDF))
            page.get_by_role("button", name="Upload", exact=True).click()
            page.locator("#upload-confirm").click()
            row = page.locator("#documents tbody tr[data-id]").first
            expect(row.locator(".badge")).to_have_text("processed", timeout=180_000)
            document = Document.objects.get(owner=fay)
            graph = document.graph

            page.goto(f"{live_server_url}/graphs/")
            page.locator("table").get_by_role("link", name="Explore", exact=True).first.click()
            expect(page).to_have_url(f"{live_server_url}/graphs/{graph.id}/explore/")
            expect(page.locator("#explore-status")).to_contain_text("most connected", timeout=60_000)
            cy = "document.getElementById('cy')._cyreg.cy"
            shown = page.evaluate(f"{cy}.nodes().map(n => [n.id(), n.data('etype')])")
            assert shown, "the overview drew no entity"
            # The list beside the canvas: the most connected entities in words, each with its type.
            listed = page.evaluate(
                "[...document.querySelectorAll('#overview-list li')].map(li => "
                "[li.querySelector('button').textContent, li.querySelector('.entity-type').textContent])"
            )
            watch.shot("explorer-pdf")
            # The owner reviews what resolution merged from the explorer (axe and the clipping check run there too).
            page.locator("#explore-merges").click()
            expect(page.get_by_role("heading", level=1)).to_have_text(f"Merges in {graph.name}")
            # Each document by its name, linked to its viewer (the API gives ids).
            expect(page.locator("#merged a", has_text=document.filename).first).to_have_attribute(
                "href", f"/documents/{document.id}/"
            )
            watch.shot("merges-pdf")
        finally:
            browser.close()

    kinds = [kind for _, kind in shown]
    typed_share = sum(kind in TYPED for kind in kinds) / len(kinds)
    assert typed_share >= 0.5, (typed_share, sorted(set(kinds)))  # typed, not every entity a "concept"
    assert listed and all(kind for _, kind in listed), listed
    assert {kind for _, kind in listed} & {k.lower() for k in TYPED}, listed
    chunks = store.ro_query(
        graph.store_name,
        "MATCH (c:Chunk {document_id: $doc}) RETURN c.text ORDER BY c.ordinal",
        {"doc": str(document.id)},
    )
    text, stop = "\n".join(str(r[0]) for r in chunks), _stopwords()

    def junk(names: list[str]) -> dict[str, str]:
        return {name: reason for name in names if (reason := junk_reason(name, text, len(chunks), stop))}

    # No junk among the names the page lists in words (the most connected).
    assert not junk([name for name, _ in listed]), junk([name for name, _ in listed])
    # Every node on the canvas, judged by the same rule: reported, not asserted (issue 25: the extractor still
    # lets a few through on this paper; see the test's output).
    names = [str(r[0]) for r in store.ro_query(
        graph.store_name, "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.name", {"ids": [i for i, _ in shown]}
    )]  # fmt: skip
    found = junk(names)
    print(f"explorer of {PDF}: {len(names)} entities drawn, typed {100 * typed_share:.1f} %, {len(listed)} listed;")
    print(f"  junk by bench/extraction_junk.py's rule among the drawn: {len(found)} {found}")
    print("explorer screenshot:", *watch.shots, sep="\n  ")
