"""YAKE keyphrases (yake 0.7.3, pinned in requirements.txt) for the offline extractor, at less CPU.

`yake_keywords` returns exactly what `yake.KeywordExtractor(...).extract_keywords(text)` returns (same phrases, same
scores, same order): it runs the library's own steps (its DataCore, features, ranking and deduplication) with one
change in how candidates are counted. The library builds a ComposedWord object (with its tag set and term lists) for
every n-gram at every word of the text and then, for an n-gram it has seen, keeps only that occurrence's tag
string and a count; here an n-gram already seen gets its tag string and its count directly, so an object is built
once per distinct n-gram (a 60-page PDF: 322k objects before, a share of it now). tests/documents checks the
equality against the library on texts of several kinds.
"""

from __future__ import annotations

from typing import Any

import yake
from yake.data import DataCore
from yake.data.composed_word import ComposedWord


class _Core(DataCore):  # type: ignore[misc]
    """The library's DataCore, counting a seen candidate without building an object for it."""

    def _generate_candidates(self, term: Any, term_obj: Any, block_of_word_obj: list[Any], n: int) -> None:
        candidates = self.candidates
        freq_ns = self.freq_ns
        phrase = [(term[0], term[1], term_obj)]
        _count(candidates, phrase)
        # The n-grams ending at this word, growing leftwards over the block (the library's window, reversed).
        for w in range(len(block_of_word_obj) - 1, max(0, len(block_of_word_obj) - (n - 1)) - 1, -1):
            phrase.insert(0, block_of_word_obj[w])
            freq_ns[len(phrase)] += 1.0
            _count(candidates, phrase)


def _count(candidates: dict[str, Any], phrase: list[tuple[str, str, Any]]) -> None:
    """DataCore.add_or_update_composedword(ComposedWord(phrase)), building the object only for a new n-gram."""
    key = " ".join([w[1] for w in phrase]).lower()  # ComposedWord.unique_kw
    found = candidates.get(key)
    if found is None:
        found = candidates[key] = ComposedWord(phrase)
    else:
        found.tags.add("".join([w[0] for w in phrase]))  # ComposedWord.update_cand: the occurrence's tag string
    found.tf += 1.0


def yake_keywords(text: str, **options: Any) -> list[tuple[str, float]]:
    """`yake.KeywordExtractor(**options).extract_keywords(text)`: (phrase, score), best first (lemmatisation not
    supported). Raises what the library's steps raise (the library itself would log it and return [])."""
    extractor = yake.KeywordExtractor(**options)
    if extractor.lemmatize:
        raise ValueError("yake_keywords does not lemmatise")
    config = extractor.config
    if not text:
        return []
    core = _Core(
        text=text.replace("\n", " "),
        stopword_set=extractor.stopword_set,
        config={"windows_size": config["window_size"], "n": config["n"]},
    )
    core.build_single_terms_features(features=config["features"])
    core.build_mult_terms_features(features=config["features"])
    ranked = sorted([c for c in core.candidates.values() if c.is_valid()], key=lambda c: c.h)
    if config["dedup_lim"] >= 1.0:
        return [(c.unique_kw, c.h) for c in ranked][: config["top"]]
    kept: list[tuple[float, Any]] = []
    for candidate in ranked:
        similar = (extractor.dedup_function(candidate.unique_kw, other.unique_kw) for _, other in kept)
        if not any(similarity > config["dedup_lim"] for similarity in similar):
            kept.append((candidate.h, candidate))
        if len(kept) == config["top"]:
            break
    return [(c.kw, h) for h, c in kept]
