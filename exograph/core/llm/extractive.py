"""The `extractive` provider: no network, no generation. It reads the question, checks that the evidence
answers it, and answers with a short answer first (a name, date or number copied from the evidence, or
yes/no for a comparison) followed by the whole evidence sentences that hold it, each cited [n]. When the
evidence does not answer, it says so plainly and names what the closest passages are about. Every word
of an answer is copied from its evidence, so it never states a figure the evidence lacks. Pure: the
caller passes an optional `similarity(query, texts)` (cosine of sentence embeddings) to match meaning.

The steps (each documented where it is):
  * relevance (`relevance_of`): does the evidence cover the question? The question's names and figures
    must be found in the evidence (at least half of them), and the best sentence must match the question
    by words and meaning above RELEVANCE_MIN. Below that the answer is a refusal (`answered` False).
  * the chain (`_follow_chain`): a question with a nested part ("the company that makes X", "the mother of
    the director of Y") is split in an inner part (what names X) and an outer part (what is asked about the
    thing X leads to). The sentence best matching the inner part names a bridge the question does not
    name; a sentence naming the bridge that matches the outer part's relation gives the far end.
    Relations are matched by meaning: embeddings when given, plus RELATION_FAMILIES, a small map of verbs
    that say the same link in other words (owns/acquired, makes/manufactured, ...).
  * the short answer (`_candidates`): spans of the best sentences of the type the question asks for
    (who: a name, when: a date, how many: a number, where: a place), not named by the question. With the
    NER's typed names (`entity_types`, the offline extractor's model) the wh-word and the question's head noun
    type the answer ("which city": a place, "which company": a body, "which actor": a person), and a name the
    best sentence defines as that noun ("X was an American actor", "the actor X") is preferred.

The text handling lives in extractive_text.py, pronouns and their referents in extractive_referents.py, the
question's reading in extractive_asked.py, the answer types and spans in extractive_spans.py, chains, choices and
yes/no comparisons in extractive_chains.py, questions of two parts in extractive_parts.py, the one-link answer's
check in extractive_link.py; this module reads the evidence and writes the answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from exograph.core.llm.extractive_asked import _answer_type, asked_noun
from exograph.core.llm.extractive_chains import _either, _follow_chain, _yes_no, compared_names
from exograph.core.llm.extractive_kinds import as_asked
from exograph.core.llm.extractive_link import _says_the_link, another_subject
from exograph.core.llm.extractive_overview import asks_overview, overview_sentences
from exograph.core.llm.extractive_parts import two_parts
from exograph.core.llm.extractive_referents import (
    _subject_name,
    defined_nouns,
    passage_lead,
    pronoun_referents,
    resolved,
    title_text,
)
from exograph.core.llm.extractive_spans import _candidates
from exograph.core.llm.extractive_text import (
    _WH,
    EntityTypes,
    Similarity,
    _family_match,
    _found,
    _named,
    _phrasal,
    _question_keys,
    _Sentence,
    _stem,
    _stems,
    _word_match,
    _written_out,
    names_in,
    sentences_of,
    spelled,
    whole_sentences,
)

__all__ = [
    "NO_ANSWER",
    "RELEVANCE_MIN",
    "EntityTypes",
    "Extracted",
    "Similarity",
    "Statement",
    "asked_noun",
    "evidence_relevance",
    "extract_answer",
    "extractive_answer",
    "names_in",
    "relevance_of",
    "sentences_of",
    "whole_sentences",
]

NO_ANSWER = "The graphs do not hold an answer to this question."
RELEVANCE_MIN = 0.3  # the best sentence's match below which the evidence does not answer (tuned, bench/chat.py)
NAME_COVERAGE_MIN = 0.5  # share of the question's names and figures the evidence must hold
# Sentences embedded per question (the most words in common with it first). 16, not 8: a sentence saying the answer in
# other words ("the ship was scrapped in 1972" for "when was the liner broken up") shares no word with the question
# and was never read by meaning. Replayed (bench/chat_replay.py): held-out notes (round D) holds 62.9 -> 67.7 %,
# answerable refused 24.2 -> 17.7 %; HotpotQA dev F1 26.8 -> 27.1; one near-topic question of 23 no longer refused.
MEANING_POOL = 16
CONFIDENT_MARGIN = 0.1  # the short answer's lead over the next candidate at which it is taken as sure (tuned)
# How sure a short answer is by what the evidence says of its type (_candidates' type evidence with the NER's types:
# 1 of the asked kind, 0 nothing said, -1 of another kind), and when it took two links (each a reading that can be wrong). Measured on
# HotpotQA dev 100 (bench/chat.py, answered questions): right answers are typed 1 about twice as often as wrong ones,
# and 53 of 96 graph answers took a chain, 44 of them wrong; relevance (the best sentence's word match) ranks them
# the wrong way round (AUC 0.36) and is left to decide whether the evidence answers at all.
TYPE_SURENESS = {1: 1.0, 0: 2 / 3, -1: 1 / 3}
CHAIN_SURENESS = 0.8
LINK_SENTENCES = 6  # the best sentences any of which, naming the short answer, may say the question's link


@dataclass(frozen=True)
class Statement:
    """One numbered evidence item as the extractive model reads it."""

    n: int
    text: str
    kind: str = "passage"
    source: str = ""


@dataclass
class Extracted:
    """The extractive answer: text as shown, whether the evidence answers, the short answer, and why."""

    text: str
    answered: bool
    short: str = ""
    relevance: float = 0.0
    chain: list[int] = field(default_factory=list)
    confidence: float = 1.0  # how sure the short answer is (0..1): its lead over the next candidate, its type, its hops
    fit: float = 0.0  # how well the short answer's sentence and type fit the question (its candidate score)
    fits: int = 0  # whether the evidence says the short answer is of the asked kind (1), of another (-1), or neither
    sentences: list[tuple[int, str]] = field(default_factory=list)  # the cited whole sentences, (n, text)


def _score(sentences: list[_Sentence], query: str, similarity: Similarity | None) -> list[_Sentence]:
    wanted = _stems(_phrasal(query))  # a phrasal verb is one word: "took part" says participated
    # an acronym the evidence never writes may be written out ("CFO": "chief financial officer")
    acronyms = [
        a
        for a in re.findall(r"\b([A-Z]{2,6})s?\b", query)  # "SREs": site reliability engineers
        if _stem(a.casefold()) in wanted and not any(re.search(rf"\b{a}\b", s.text) for s in sentences)
    ]
    # A sentence opening with a pronoun is read with its referent in the pronoun's place ("It was designed by X"
    # is about the lighthouse the sentence before names).
    read = [resolved(s.text, s.about) for s in sentences]
    scored = [
        _Sentence(
            s.n, s.text, s.position, _word_match(wanted, text, _family_match(query, text), acronyms), about=s.about
        )
        for s, text in zip(sentences, read, strict=True)
    ]
    said = {id(new): text for new, text in zip(scored, read, strict=True)}
    for acronym in acronyms:  # read by meaning written out too: MiniLM does not know "CFO" is a financial officer
        written = next((w for s in sentences if (w := spelled(acronym, s.text))), "")
        query = re.sub(rf"\b{acronym}\b", written, query) if written else query
    if similarity is not None and scored:
        # Only the MEANING_POOL sentences sharing most words with the query are embedded (the reader's cost). Every
        # question is read by meaning too: a sentence that says it in other words ("designed" for "drew up the
        # plans") must be able to win over one that only repeats the question's words.
        pool = sorted(scored, key=lambda s: (-s.words, s.position))[:MEANING_POOL]
        for sentence, value in zip(pool, similarity(query, [said[id(s)] for s in pool]), strict=True):
            sentence.meaning = max(0.0, float(value))
    return sorted(scored, key=lambda s: (-s.score, s.position))


def relevance_of(question: str, ranked: list[_Sentence], evidence_text: str) -> float:
    """How well the evidence covers the question (0..1): the best sentence's match, zero when fewer than
    NAME_COVERAGE_MIN of the question's names and figures occur in the evidence."""
    if not ranked:
        return 0.0
    keys = _question_keys(question)
    if keys:
        covered = sum(1 for key in keys if _named(key, evidence_text) or _written_out(key, evidence_text)) / len(keys)
        if covered < NAME_COVERAGE_MIN:
            return 0.0
    return round(ranked[0].score, 3)


def _cite(numbers: Sequence[int]) -> str:
    return "[" + ", ".join(str(n) for n in dict.fromkeys(numbers)) + "]"


def _line(sentence: str, n: int) -> str:
    body = sentence.rstrip()
    end = body[-1] if body[-1] in ".!?" else "."
    return f"{body.rstrip('.!?')} [{n}]{end}"


def _refusal(question: str, statements: Sequence[Statement], ranked: list[_Sentence]) -> str:
    q = " ".join(question.strip().rstrip("?").split())
    first = q.split()[0].casefold() if q else ""
    # "what does the paper propose" reads wrong after "don't say": a question with do-support is quoted whole
    inverted = re.match(r"(?:what|which|who|whom|whose|where|when|why|how)\b\D{0,40}?\s(?:do|does|did)\b", q, re.I)
    what = f"{first}{q[len(first) :]}" if first in _WH and not inverted else f"the answer to “{q}?”"
    text = f"Your documents don't say {what}."
    closest: list[tuple[str, int]] = []
    by_n = {s.n: s for s in statements}
    for sentence in ranked[:6]:
        item = by_n.get(sentence.n)
        topic = (item.source if item else "") or next(iter(names_in(sentence.text)), "")
        if topic and topic.casefold() not in {t.casefold() for t, _ in closest}:
            closest.append((topic, sentence.n))
        if len(closest) >= 2:
            break
    if closest:
        topics = " and ".join(topic for topic, _ in closest)
        text += f" The closest passages are about {topics} {_cite([n for _, n in closest])}."
    return text


def extract_answer(
    *,
    question: str,
    statements: Sequence[Statement],
    similarity: Similarity | None = None,
    max_sentences: int = 2,
    answer_type: str | None = None,
    entity_types: EntityTypes | None = None,
) -> Extracted:
    """The short answer and its cited whole sentences, or a plain refusal when the evidence does not answer.
    `answer_type` "manner" asks for the best sentences only (no short answer, no chain): research findings.
    `entity_types` (the NER's typed names of texts) types the short answer's candidates: a name of the type the
    question asks for is preferred, one of another type (a person for "which city") is not taken. A question with
    a second wh-part ("Who will teach grafting, and where?") is answered part by part (_two_parts)."""
    parts = two_parts(question) if answer_type is None else None
    if parts is not None:
        ask = partial(extract_answer, similarity=similarity, max_sentences=max_sentences, entity_types=entity_types)
        first = ask(question=parts[0], statements=statements)
        # the second part asks about the same clause: it is read only in the sentences that answered the first part
        # (elsewhere the evidence speaks of something else: "on 3 May" of the coaching, not of the order)
        said = [Statement(n, text) for n, text in first.sentences]
        second = ask(question=parts[1], statements=said) if first.answered else first
        tail = re.sub(r"^[\s,]*and\s+", "", question[len(parts[0]) - 1 :], flags=re.IGNORECASE)  # as the user wrote it
        return _joined(first, second, tail)
    if answer_type is None and asks_overview(question):
        # "What is this document about?": each document's opening sentences, whatever words they share with it
        opening = overview_sentences(statements)
        if opening:
            text = " ".join(_line(sentence, n) for n, sentence in opening)
            return Extracted(text=text, answered=True, relevance=1.0, sentences=opening)
    sentences: list[_Sentence] = []
    seen: set[str] = set()
    documents: dict[str, str] = {}  # each document's text (its passages here), for the name its title gives
    defined: dict[str, dict[str, str]] = {}  # each document's defined nouns (defined_nouns), read once a document
    leads: set[str] = set()  # what the passages open with as their subject
    for s in statements:
        if s.source:
            documents[s.source] = f"{documents.get(s.source, '')} {s.text}"
    for position, statement in enumerate(statements):
        if statement.kind in ("entity", "fact", "relation"):
            continue  # labels and triples are evidence shown as facts, never rendered as prose
        wholes = whole_sentences(statement.text)
        lead = passage_lead(wholes, statement.source, documents.get(statement.source, ""))
        if wholes and lead == _subject_name(wholes[0]):
            leads.add(lead)  # the passage opens with its subject ("The Vela is a brass desk lamp ...")
        if statement.source and statement.source not in defined:  # the nouns a document defines its names by
            defined[statement.source] = defined_nouns(whole_sentences(documents.get(statement.source, statement.text)))
        nouns = defined[statement.source] if statement.source else defined_nouns(wholes)
        for text, about in zip(wholes, pronoun_referents(wholes, lead, nouns), strict=True):
            key = text.casefold()
            if key not in seen:
                seen.add(key)
                sentences.append(_Sentence(statement.n, text, position, about=about))
    ranked = _score(sentences, question, similarity)
    evidence_text = " ".join(s.text for s in statements)
    relevance = relevance_of(question, ranked, evidence_text)
    if relevance < RELEVANCE_MIN:
        return Extracted(text=_refusal(question, statements, ranked), answered=False, relevance=relevance)
    kind = answer_type or _answer_type(question)

    def fill(wanted: Sequence[_Sentence]) -> None:
        missing = [s for s in wanted if s.types is None]
        typed = entity_types([s.text for s in missing]) if entity_types is not None and missing else None
        for sentence, names in zip(missing, typed or [[] for _ in missing], strict=True):
            sentence.types = {name.casefold(): label for name, label in names}

    typed_by: dict[str, int] = {}  # each candidate's type evidence (_candidates)
    typing = entity_types is not None  # without the NER, nothing said of a candidate's type is no evidence
    either = _either(question, ranked) if " or " in question and kind not in ("number", "manner") else None
    # "What country do Hatton Hill and Hatton Castle have in common?": what the passages of both say, not a chain
    shared = compared_names(question)[:2] if _IN_COMMON.search(question) else []
    chain = (
        _follow_chain(question, sentences, kind, ranked, fill if entity_types else None, typed_by=typed_by)
        if kind not in ("yesno", "manner") and either is None and len(shared) < 2
        else None
    )
    if either is not None:
        chain = None
    short = ""
    margin = 1.0
    fit = relevance
    fits = 0
    support: list[_Sentence]
    if either is not None:
        short, support = either
    elif chain is not None:
        short, support = chain
        fits = typed_by.get(short.casefold(), 0)
    else:
        support = [ranked[0]]
        if kind == "yesno":
            short = _yes_no(question, ranked)
            names = compared_names(question)
            for name in names[:2]:
                hit = next((s for s in ranked if _found(name, s.text)), None)
                if hit is not None and hit not in support:
                    support.append(hit)
        elif kind != "manner":
            # "Which magazine gave it an award?" over notes on the Kestrel X2: "it" is the notes' subject, never the
            # answer
            meant = sorted(leads - {""}) if _PRONOUN_ASKED.search(question) and not names_in(question) else []
            spans = _candidates(
                ranked, question, kind, exclude=meant, fill=fill if entity_types else None, typed_by=typed_by
            )
            # "The deal is expected to close in June" for "When does the exhibition close?": another thing's answer
            spans = [span for span in spans if not another_subject(question, span[2].text, evidence_text)]
            if len(shared) == 2:
                sides = [
                    " ".join(s.text for s in statements if _found(name, f"{s.source} {s.text}")) for name in shared
                ]
                spans = [span for span in spans if all(_found(span[1], side) for side in sides)] or spans
            if spans:
                short, where = spans[0][1], spans[0][2]
                fit = spans[0][0]
                fits = typed_by.get(short.casefold(), 0)
                margin = spans[0][0] - (spans[1][0] if len(spans) > 1 else 0.0)
                support = [where] + [s for s in ranked[:1] if s is not where]
            elif kind in ("date", "number", "person", "place", "colour") and similarity is not None:
                # "When was the foundation set up?" over notes that give no date: the documents don't say, whatever
                # else the best sentences say about the foundation
                return Extracted(text=_refusal(question, statements, ranked), answered=False, relevance=relevance)
    short = as_asked(short, question, kind, [s.text for s in sentences]) if short else short
    year = (
        re.search(r"\b(1\d{3}|20\d{2})\b", short) if kind == "date" and re.search(r"\byear\b", question, re.I) else None
    )
    short = year.group(1) if year else short  # "in what year": 1924, not "15 June 1924"
    titled = _HONORIFIC.match(short) if kind in ("person", "name") else None
    short = short[titled.end() :] if titled and len(short[titled.end() :].split()) >= 2 else short  # not "Dr. Dre"
    # another good sentence naming the same answer may say the link its best sentence does not ("The Conversation is
    # a media outlet" answers, "... the co-founder of The Conversation" says the link)
    holding = [support[0], *(s for s in ranked[:LINK_SENTENCES] if s is not support[0] and _names(short, s.text))]
    names = [key for key in _question_keys(question) if not key[:1].isdigit()]
    described = " ".join(s.text for s in statements if any(_found(name, s.text) for name in names))
    if (
        short
        and chain is None
        and either is None
        and kind != "yesno"
        and similarity is not None
        and not any(
            _says_the_link(
                question,
                where,
                f"{_passage(statements, where.n, short)} {where.about}",
                described,
                evidence_text,
                similarity,
            )
            for where in holding
        )
    ):
        # The evidence names what the question names but its answering sentence means something else ("When was
        # Arup founded?" over "The design work was carried out by Arup ... in 2020"), or the sentence is about
        # something else ("Where was Walter Ashby born?" over another article's "Agnes Vireo was born in
        # Glasgow"): not an answer.
        return Extracted(text=_refusal(question, statements, ranked), answered=False, relevance=relevance)
    for extra in ranked:
        if len(support) >= max_sentences or extra.score < relevance * 0.6:
            break
        if extra not in support:
            support.append(extra)
    lines = [_line(s.text, s.n) for s in support]
    numbers = [s.n for s in support]
    if short:
        holders = [s.n for s in support if short.casefold() in s.text.casefold()] or numbers
        if chain is not None or kind == "yesno" or either is not None:
            holders = numbers  # a chain's answer rests on every link; a comparison on both sides
        head = f"{short[:1].upper()}{short[1:]} {_cite(holders)}."
        text = " ".join([head, *lines])
    else:
        text = " ".join(lines)
    return Extracted(
        text=text,
        answered=True,
        short=short,
        relevance=relevance,
        chain=[s.n for s in support[:2]] if chain is not None else [],
        # A short answer with a close runner-up is a guess: half sure at no margin, sure from CONFIDENT_MARGIN; one
        # the evidence does not type as asked, or reached through a chain, less so (a yes/no or a choice between the
        # question's options is of the asked kind by its form).
        confidence=round(
            min(1.0, max(0.0, 0.5 + 0.5 * margin / CONFIDENT_MARGIN))
            * (TYPE_SURENESS[fits] if short and typing and kind != "yesno" and either is None else 1.0)
            * (CHAIN_SURENESS if chain is not None else 1.0),
            3,
        ),
        fit=round(fit, 3),
        fits=fits,
        sentences=[(s.n, s.text) for s in support],
    )


def _joined(first: Extracted, second: Extracted, asked: str) -> Extracted:
    """One answer to a question of two parts: the first part's, with the second part's short answer beside its own
    ("Margaret Oduya [1], in the community hall [1].") and its sentences, or a plain word that the documents don't
    say the second part. The first part unanswered: its refusal."""
    if not first.answered:
        return first
    if not (second.answered and second.short) or second.short.casefold() == first.short.casefold():
        text = f"{first.text} Your documents don't say {asked.rstrip('?').casefold()}."
        return replace(first, text=text, confidence=round(first.confidence * 0.5, 3))
    where = second.sentences[0][1] if second.sentences else ""
    before = re.search(rf"\b(in|at|on|from|near|by|with|to)\s+(?:the\s+)?{re.escape(second.short)}", where)
    preposition = f"{before.group(1)} " if before and not second.short.casefold().startswith(before.group(1)) else ""
    cited = [n for n, text in second.sentences if second.short.casefold() in text.casefold()] or [
        n for n, _ in second.sentences[:1]
    ]
    lines = list(dict.fromkeys([*first.sentences, *second.sentences]))
    head_first = first.short or ""
    second_part = f"{preposition}{second.short} {_cite(cited)}"
    if head_first:
        first_cited = [n for n, text in first.sentences if head_first.casefold() in text.casefold()] or [
            n for n, _ in first.sentences[:1]
        ]
        head = f"{head_first[:1].upper()}{head_first[1:]} {_cite(first_cited)}, {second_part}."
    else:
        head = f"{second_part[:1].upper()}{second_part[1:]}."
    text = " ".join([head, *(_line(sentence, n) for n, sentence in lines)])
    return replace(
        first,
        text=text,
        short=f"{head_first}, {preposition}{second.short}" if head_first else f"{preposition}{second.short}",
        confidence=min(first.confidence, second.confidence),
        fit=min(first.fit, second.fit),
        fits=min(first.fits, second.fits),
        sentences=lines,
    )


_IN_COMMON = re.compile(r"\b(?:have|has|had)\s+in\s+common\b|\bin\s+common\b.*\?", re.IGNORECASE)
# A question's pronoun: "Which magazine gave it an award?" asks about the notes' subject.
_PRONOUN_ASKED = re.compile(r"\b(?:it|its|he|she|his|her|him|they|their|them)\b", re.IGNORECASE)
# A title before a person's name is no part of the answer: "Professor Alan Briggs" -> "Alan Briggs"
_HONORIFIC = re.compile(
    r"(?:professor|prof\.?|dr\.?|mr\.?|mrs\.?|ms\.?|mx\.?|sir|dame|rev\.?|reverend|captain|capt\.?|colonel|col\.?|"
    r"general|gen\.?|admiral|major|lieutenant|lt\.?|commander|sergeant|sgt\.?|(?:field\s+)?marshal|councillor|"
    r"cllr\.?|alderman|(?:(?:united\s+states|u\.s\.|us|former)\s+)?(?:president|senator|governor|mayor|judge))\s+",
    re.IGNORECASE,
)


def _names(short: str, text: str) -> bool:
    """The text names the short answer itself, not a longer name holding it ("University of Valdmora" for
    "Valdmora")."""
    if not short[:1].isupper():
        return _found(short, text)
    bare = short.casefold().removeprefix("the ")
    return bare in {name.casefold().removeprefix("the ") for name in names_in(text)}


def _passage(statements: Sequence[Statement], n: int, short: str) -> str:
    """The text that must say what the question names for the answer's sentence n: its passage, the passages holding
    the short answer, and their documents' titles ("quillmark-notes.txt": a passage is about its document's subject,
    "Development is funded by ..." in notes on Quillmark)."""
    held = [s for s in statements if s.n == n or _found(short, s.text)]
    titles = dict.fromkeys(title_text(s.source) for s in held if s.source)
    return " ".join([*(s.text for s in held), *titles])


def evidence_relevance(
    *, question: str, statements: Sequence[Statement], similarity: Similarity | None = None
) -> float:
    """relevance_of over statements' whole sentences (any provider's evidence): 0..1."""
    sentences = [
        _Sentence(s.n, text, position)
        for position, s in enumerate(statements)
        if s.kind not in ("entity", "fact", "relation")
        for text in whole_sentences(s.text)
    ]
    ranked = _score(sentences, question, similarity)
    return relevance_of(question, ranked, " ".join(s.text for s in statements))


def extractive_answer(
    *,
    question: str,
    evidence: Sequence[tuple[int, str]],
    max_sentences: int = 3,
    on_token: Callable[[str], None] | None = None,
    similarity: Similarity | None = None,
) -> str:
    """The answer text of `extract_answer` over plain (n, text) evidence, streamed to on_token. Pure."""
    result = extract_answer(
        question=question,
        statements=[Statement(n, text) for n, text in evidence],
        similarity=similarity,
        max_sentences=max_sentences,
    )
    if on_token is not None:
        on_token(result.text)
    return result.text
