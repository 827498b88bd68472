"""The offline extractor's YAKE keyphrases (extraction.keyphrases): the library's answer, phrase for phrase."""

from __future__ import annotations

import pytest
import yake

from exograph.documents.extraction.keyphrases import yake_keywords

_TEXTS = [
    # a narrative with names, dates and repeated phrases
    "Marguerite Okonkwo founded the Lakeside Weaving Cooperative in 1987. The weaving cooperative sold linen "
    "to tailors in Harbour Town.\nIn 1994 the cooperative opened a second mill; the second mill burned in 2001, "
    "and Okonkwo rebuilt the mill with a loan from the Harbour Town savings bank.",
    # a technical text: acronyms, figures, hyphens, punctuation runs, a repeated three-word term
    "The trace compiler (TC) records hot loops. A trace compiler emits SSA code; hot loop detection uses "
    "counters... Trace compiler output: 12.5% faster on x86-64, 3x on ARMv8! See Fig. 4 -- hot loop detection "
    "again, and the trace compiler's side exits (guards).",
    # one short sentence, and a text of stopwords only
    "Quiet rivers carry silt.",
    "and the of it is was",
]


@pytest.mark.parametrize("text", _TEXTS)
@pytest.mark.parametrize("top", [3, 40])
def test_keyphrases_are_the_librarys_own_phrases_scores_and_order(text: str, top: int) -> None:
    options = {"lan": "en", "n": 3, "dedupLim": 0.7, "top": top}
    assert yake_keywords(text, **options) == yake.KeywordExtractor(**options).extract_keywords(text)


def test_keyphrases_without_deduplication_are_the_librarys_too() -> None:
    options = {"lan": "en", "n": 2, "dedup_lim": 1.0, "top": 10}
    assert yake_keywords(_TEXTS[1], **options) == yake.KeywordExtractor(**options).extract_keywords(_TEXTS[1])
