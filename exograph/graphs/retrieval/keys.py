"""Question parsing: the keys exact entity linking tries, the names a passage writes, a title's keys."""

from __future__ import annotations

import re

from exograph.graphs.retrieval.types import (
    MAX_NGRAM,
    NAME_SPANS_PER_PASSAGE,
)
from exograph.graphs.types import normalize_name, title_bare

_EDGE_PUNCT = "?.,!;:\"'“”‘’«»()[]{}"


def _without_possessive(name: str) -> str:
    return name[:-2] if name.endswith(("'s", "’s")) else name


def _as_written(span: str) -> str:
    """A name as a text writes it: surrounding punctuation and a trailing possessive dropped, the closing
    bracket of a qualifier kept ("Kadal (1968 film)?" -> "Kadal (1968 film)")."""
    name = _without_possessive(span.strip(_EDGE_PUNCT)).strip(_EDGE_PUNCT)  # a bare apostrophe went with the edge
    if "(" in name and name.count("(") == name.count(")") + 1 and span[span.index(name) + len(name) :].startswith(")"):
        name += ")"
    return name


def question_keys(question: str, *, max_n: int = MAX_NGRAM) -> list[str]:
    """Normalised word n-grams of the question (1..max_n words, longest first), the keys exact entity linking
    tries: words alone ("walker texas ranger") and as written, inner punctuation kept and a possessive dropped
    ("Walker, Texas Ranger's" -> "walker, texas ranger" and "walker texas ranger"), so a name with a comma or an apostrophe-s still links."""
    words = re.findall(r"[^\W_](?:[^\s]*[^\W_])?", question)
    tokens = question.split()
    keys: list[str] = []

    def add(raw: str) -> None:
        key = normalize_name(raw)
        if len(key) >= 2 and key not in keys:
            keys.append(key)

    for n in range(min(max_n, max(len(words), len(tokens))), 0, -1):
        for start in range(len(words) - n + 1):
            add(_without_possessive(" ".join(words[start : start + n])))
        for start in range(len(tokens) - n + 1):
            add(_as_written(" ".join(tokens[start : start + n])))
    return keys[:400]


def name_spans(text: str, *, max_n: int = MAX_NGRAM, limit: int = NAME_SPANS_PER_PASSAGE) -> list[str]:
    """Normalised keys of the names a passage writes: runs of 1..max_n words that start and end on a capitalised
    word or a number ("Walker, Texas Ranger", "Gloria in D Major", "1982"), the possessive dropped. Graph mode
    links a passage to every entity so named, beside what extraction found (which may have cut the name
    differently: "jazz musician Charles" for "Charles"). Scripts without case give no spans; their links are
    extraction's alone."""
    tokens = text.split()
    stripped = [token.strip(_EDGE_PUNCT) for token in tokens]
    ends = [word[:1].isupper() or word[:1].isdigit() for word in stripped]
    keys: dict[str, None] = {}
    for start, first in enumerate(tokens):
        if not (stripped[start][:1].isupper() or first[:1].isdigit()):
            continue
        for end in range(start, min(start + max_n, len(tokens))):
            if not ends[end]:
                continue
            key = normalize_name(_as_written(" ".join(tokens[start : end + 1])))
            if len(key) >= 3 and key not in keys:
                keys[key] = None
                if len(keys) >= limit:
                    return list(keys)
    return list(keys)


def title_keys(title: str) -> list[str]:
    """The keys a passage may name a document's title by: the title, and for a disambiguated title
    ("William Clemens (film director)", "Whispers (Corina song)") also the bare name before the qualifier."""
    keys = [key] if (key := normalize_name(title)) else []
    if (bare := normalize_name(title_bare(title))) and bare not in keys:
        keys.append(bare)
    return keys
