"""The offline extractor reads a verb between two names as their relation only when it is the first name's verb."""

from __future__ import annotations

from dataclasses import dataclass

from exograph.documents.extraction import OfflineExtractor, document_extract


@dataclass(frozen=True)
class C:
    id: str
    text: str


def _typed(text: str) -> set[tuple[str, str, str]]:
    extraction = document_extract([C("c1", text)], extractor=OfflineExtractor())
    return {(r.source, r.type, r.target) for r in extraction.relations if r.type != "RELATED_TO"}


def test_a_second_clause_with_its_own_subject_links_no_two_people():
    typed = _typed("The choir's conductor is Mabel Osei and the accompanist is Tomas Lindqvist.")
    assert not any({s, t} == {"Mabel Osei", "Tomas Lindqvist"} for s, _, t in typed), typed


def test_a_verb_right_after_the_first_name_still_links_them():
    typed = _typed("Greta Holm founded Holm Ceramics in Falmouth. Holm Ceramics acquired Penryn Glassworks.")
    assert ("Greta Holm", "FOUND", "Holm Ceramics") in typed
    assert ("Holm Ceramics", "ACQUIRE", "Penryn Glassworks") in typed
