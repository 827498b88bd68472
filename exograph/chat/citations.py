"""The citation check of an answer against its numbered evidence (no LLM; literal rules).

Rules (../shared/reference/graphrag-sdk-agent-tools.txt, "Evidence and citations"): markers cite one
item [3], a list [1, 4] or a range [1-3]; numbers pointing at nothing are removed from the answer;
sentences stating a figure or a name without a citation are listed as `uncited`; cited sentences whose
figures or names the cited evidence lacks are listed as `unsupported`. A sentence saying the graphs
lack something needs no citation. The support score is the share of factual (figure- or name-bearing)
cited sentences whose evidence holds all of them. An answer citing no real evidence is not grounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

# A citation marker: [3], [1, 4], [2-5] (a range of at most CITATION_RANGE_MAX + 1 numbers), mixed.
CITATION_MARKER = re.compile(r"\[(\d+(?:\s*[-–]\s*\d+)?(?:\s*,\s*\d+(?:\s*[-–]\s*\d+)?)*)\]")
CITATION_RANGE_MAX = 100
_MARKER = re.compile(r"\s?" + CITATION_MARKER.pattern)  # with the space before it (cut out with the marker)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_FIGURE = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?![\w])")
_NAME_RUN = re.compile(r"\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")
_OPENERS = frozenset(
    "the a an however but and so then also in on at for this that these those it its there their our we "
    "i you he she they yes no according based both each every some many most when while although if "
    "after before since as by from with".split()
)
_LACK = re.compile(
    r"\b(do(?:es)?\s+not|don't|doesn't|did\s+not|no\s+(?:information|evidence|answer|mention)|"
    r"not\s+(?:found|mentioned|say|hold|contain))\b.*\b(graphs?|evidence|sources?|documents?)\b|"
    r"\b(graphs?|evidence|sources?|documents?)\b.*\b(do(?:es)?\s+not|don't|doesn't|lacks?|holds?\s+no|"
    r"says?\s+nothing|no\s+(?:information|answer))\b",
    re.IGNORECASE,
)


@dataclass
class CitationCheck:
    answer: str
    cited: list[int] = field(default_factory=list)
    invalid: list[int] = field(default_factory=list)
    uncited: list[str] = field(default_factory=list)
    unsupported: list[dict[str, Any]] = field(default_factory=list)
    support_score: float = 0.0
    grounded: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "grounded": self.grounded,
            "support_score": self.support_score,
            "cited": self.cited,
            "invalid": self.invalid,
            "uncited": self.uncited,
            "unsupported": self.unsupported,
        }


def citation_numbers(spec: str) -> list[int]:
    """The numbers a marker's inside cites ("1, 3-5" -> [1, 3, 4, 5]): the one parser of citation markers (the
    answer check here and the chat page's links). A reversed range or one spanning more than CITATION_RANGE_MAX
    cites nothing. Pure."""
    out: list[int] = []
    for part in spec.split(","):
        bounds = re.split(r"[-–]", part.strip())
        if len(bounds) == 2:
            low, high = int(bounds[0]), int(bounds[1])
            if low <= high and high - low <= CITATION_RANGE_MAX:
                out.extend(range(low, high + 1))
        else:
            out.append(int(bounds[0]))
    return out


def _norm_figure(figure: str) -> str:
    figure = figure.replace(",", "").lstrip("+")
    if "." in figure:
        figure = figure.rstrip("0").rstrip(".")
    return figure


def figures_in(text: str) -> set[str]:
    return {_norm_figure(f) for f in _FIGURE.findall(_MARKER.sub(" ", text))}


def names_in(sentence: str) -> list[str]:
    """Runs of capitalised words; the sentence's first word counts when it starts a run or others exist."""
    text = _MARKER.sub(" ", sentence).strip()
    runs: list[str] = []
    for match in _NAME_RUN.finditer(text):
        words = match.group(0).split()
        if match.start() == 0:
            if words[0].casefold() in _OPENERS:
                words = words[1:]
            elif len(words) == 1 and not any(m.start() > 0 for m in _NAME_RUN.finditer(text)):
                continue
        if words:
            runs.append(" ".join(words))
    return runs


def _name_found(name: str, evidence_text: str) -> bool:
    lowered = evidence_text.casefold()
    for word in re.findall(r"[^\W_]{3,}", name):
        if not re.search(rf"(?<![^\W_]){re.escape(word.casefold())}(?![^\W_])", lowered):
            return False
    return True


def citations_check(*, answer: str, evidence: Mapping[int, str]) -> CitationCheck:
    """Check `answer` against `evidence` ({n: full text}). Pure."""
    invalid: list[int] = []

    def keep_valid(match: re.Match[str]) -> str:
        numbers = citation_numbers(match.group(1))
        valid = [n for n in numbers if n in evidence]
        invalid.extend(n for n in numbers if n not in evidence)
        return f" [{', '.join(str(n) for n in dict.fromkeys(valid))}]" if valid else ""

    cleaned = _MARKER.sub(keep_valid, answer).strip()
    cited: list[int] = []
    uncited: list[str] = []
    unsupported: list[dict[str, Any]] = []
    factual = supported = 0
    for sentence in (part.strip() for part in _SENTENCE.split(cleaned)):
        if not sentence:
            continue
        numbers = [n for m in _MARKER.finditer(sentence) for n in citation_numbers(m.group(1))]
        cited.extend(numbers)
        figures = figures_in(sentence)
        names = names_in(sentence)
        if not figures and not names:
            continue
        if not numbers:
            if not _LACK.search(sentence):
                uncited.append(sentence)
                factual += 1
            continue
        factual += 1
        text = " ".join(evidence[n] for n in dict.fromkeys(numbers))
        missing_figures = sorted(figures - figures_in(text))
        missing_names = [name for name in names if not _name_found(name, text)]
        if missing_figures or missing_names:
            unsupported.append({"sentence": sentence, "figures": missing_figures, "names": missing_names})
        else:
            supported += 1
    cited = list(dict.fromkeys(cited))
    return CitationCheck(
        answer=cleaned,
        cited=cited,
        invalid=list(dict.fromkeys(invalid)),
        uncited=uncited,
        unsupported=unsupported,
        support_score=round(supported / factual, 3) if factual else (1.0 if cited else 0.0),
        grounded=bool(cited),
    )


# A marker as the answer writes it ([3] or [1, 4]) and the start of one still streaming ("[1, ").
_RENUMBER_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_OPEN_MARKER = re.compile(r"\[[\d,\s]{0,40}")


class CitationRenumbering:
    """Renumber a turn's evidence from `start` in order of first citation while the answer streams, so the
    streamed text carries the numbers the stored answer will (numbers not in `own`, an earlier turn's,
    stay). `feed` returns what can be sent now (a marker cut between two pieces is held back until it
    closes); `finish` returns the rest. Feeding a whole answer gives the same numbers as streaming it. An item
    in `fixed` (an earlier turn cited it: exograph/chat/numbering.py) keeps the number it maps to."""

    def __init__(self, *, own: Iterable[int], start: int, fixed: Mapping[int, int] | None = None) -> None:
        self.own = set(own)
        self.fixed = dict(fixed or {})
        self.mapping: dict[int, int] = {}
        self._next = start
        self._pending = ""

    @property
    def next_number(self) -> int:
        """The number the next new citation would take."""
        return self._next

    def _rewrite(self, match: re.Match[str]) -> str:
        numbers = [int(n) for n in match.group(1).split(",")]
        for n in numbers:
            if n in self.own and n not in self.mapping:
                if n in self.fixed:
                    self.mapping[n] = self.fixed[n]
                else:
                    self.mapping[n] = self._next
                    self._next += 1
        return "[" + ", ".join(str(self.mapping.get(n, n)) for n in numbers) + "]"

    def feed(self, piece: str) -> str:
        text = self._pending + piece
        self._pending = ""
        cut = text.rfind("[")
        if cut != -1 and _OPEN_MARKER.fullmatch(text, cut):
            text, self._pending = text[:cut], text[cut:]
        return _RENUMBER_MARKER.sub(self._rewrite, text)

    def finish(self) -> str:
        text, self._pending = self._pending, ""
        return _RENUMBER_MARKER.sub(self._rewrite, text)

    def whole(self, text: str) -> str:
        """Renumber a whole answer (feed then finish)."""
        return self.feed(text) + self.finish()
