"""The offline research plan: readable sub-questions made from the topic's own noun phrases (no model).

The topic is cut into its noun phrases ("facets") at function words and verbs, by the part-of-speech tags the NER
model gives ("impact of microplastics on freshwater fish" -> "impact of microplastics", "freshwater fish"; "Which
suppliers deliver flour, dairy and packaging to Harrow Lane Bakery" -> "suppliers", "flour", "dairy", "packaging",
"Harrow Lane Bakery"). The subject is the facet holding the topic's first name, else the one holding its best
keyphrase (YAKE); the others are ranked by their best keyphrase. Each sub-question is one of a few templates that are
grammatical for any noun phrase, so every topic gets whole questions, never word windows:

- "What is known about <subject>?"
- "What is known about <phrase>?" for each phrase coordinated with a shared "of" tail ("conservation and loans of
  the museum": the conservation of the museum, the loans of the museum);
- "How are <subject> and <facet> related?" for the next facets;
- "What happened to <subject> after 2011?" for a year the topic dates with a preposition;
- then, while the plan is short of its size, "What is the history of <subject>?" and "Who is involved in <subject>?".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Words that end a noun phrase: articles and other determiners, prepositions, conjunctions, pronouns, question
# words and auxiliaries. "of" joins ("history of the museum" is one phrase) unless it would start or end one.
_FUNCTION = frozenset(
    """a an the this that these those its their his her our your my some any each every all both either neither
    no other another such what which who whom whose when where why how whether
    and or but nor so yet versus vs
    about above across after against along among around as at before behind below beneath beside besides between
    beyond by despite during except for from in inside into like near off on onto out outside over past per since
    than through throughout till to toward towards under underneath unlike until up upon via with within without
    is are was were be been being am do does did done have has had having can could may might must shall should
    will would i you he she it we they me him us them there here not also only just very more most less least""".split()
)
_JOINS = frozenset({"of"})
_ARTICLES = frozenset({"the", "a", "an"})
# Penn tags of verbs and modals: a facet is a noun phrase, so they end it ("suppliers deliver flour").
_VERB_TAGS = frozenset({"VB", "VBD", "VBN", "VBP", "VBZ", "MD"})
_PLURAL_NOUN_TAGS = frozenset(
    {"VBZ", "VBP"}
)  # "transformer architectures for": a plural noun the tagger took for a verb
_NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
_TOKEN = re.compile(r"[^\W_][\w'’.&/-]*[^\W_]|[^\W_]", re.UNICODE)
_YEAR = re.compile(r"^(?:1[5-9]|20)\d\d$")
_DATING = frozenset({"after", "before", "since", "until", "till", "in", "during", "from"})
# Questions any noun phrase takes, asked while the plan is short of its size; each with its own key word.
_ANGLES = (
    ("history", "What is the history of {subject}?"),
    ("questions", "What are the open questions about {subject}?"),
    ("people", "Which people and organisations are linked to {subject}?"),
    ("facts", "What are the key facts about {subject}?"),
)
_NAME_TYPES = frozenset({"PERSON", "ORGANIZATION", "LOCATION", "WORK", "EVENT", "PRODUCT"})


@dataclass(frozen=True)
class _Token:
    text: str
    start: int
    end: int
    tag: str


def _tokens(topic: str) -> tuple[list[_Token], list[tuple[int, int]]]:
    """The topic's word tokens with their tags ("" when the model is not there) and its names' character spans."""
    from exograph.documents.extraction.ner import ner_read, pos_tags

    words = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(topic)]
    read = ner_read([topic])
    if read is None:
        return [_Token(text, start, end, "") for text, start, end in words], []
    doc = read.docs[0]
    tag_at = {token.idx: tag for token, tag in zip(doc, pos_tags(doc), strict=True)}
    names = [(span.start, span.end) for span in read.spans[0] if span.type in _NAME_TYPES]
    return [_Token(text, start, end, tag_at.get(start, "")) for text, start, end in words], names


def _ends_phrase(tokens: Sequence[_Token], index: int) -> bool:
    token = tokens[index]
    word = token.text.casefold()
    if word in _FUNCTION or _YEAR.match(word):
        return True
    if token.tag not in _VERB_TAGS:
        return False
    nxt = tokens[index + 1] if index + 1 < len(tokens) else None
    after_noun = index > 0 and tokens[index - 1].tag in _NOUN_TAGS
    at_end = nxt is None or nxt.text.casefold() in _FUNCTION
    return not (token.tag in _PLURAL_NOUN_TAGS and after_noun and at_end and word.endswith("s"))


def _facets(topic: str, tokens: Sequence[_Token]) -> list[tuple[int, int]]:
    """The noun phrases of the topic as character spans, in the topic's order."""
    spans: list[tuple[int, int]] = []
    run: list[_Token] = []

    def close() -> None:
        while run and run[-1].text.casefold() in _JOINS | _ARTICLES:
            run.pop()
        if run:
            spans.append((run[0].start, run[-1].end))
        run.clear()

    for index, token in enumerate(tokens):
        word = token.text.casefold()
        joined = bool(run) and run[-1].text.casefold() in _JOINS
        if (word in _JOINS and run) or (joined and word in _ARTICLES):  # "history of the museum": one phrase
            run.append(token)
        elif _ends_phrase(tokens, index):
            close()
        else:
            run.append(token)
    close()
    # A phrase the topic glued with punctuation ("flour, dairy") is two phrases.
    out: list[tuple[int, int]] = []
    for start, end in spans:
        cuts = [m.end() for m in re.finditer(r"[,;:()\[\]]\s*", topic[start:end])]
        bounds = [start, *(start + c for c in cuts), end]
        out.extend((a, b) for a, b in zip(bounds, bounds[1:], strict=False) if topic[a:b].strip(" ,;:()[]"))
    return [(a, a + len(topic[a:b].rstrip(" ,;:()[]"))) for a, b in out]


def _rank(phrase: str, keyphrases: Sequence[str]) -> int:
    """The rank of the best keyphrase sharing a word with the phrase (len(keyphrases) when none does)."""
    words = set(phrase.casefold().split())
    return next((i for i, k in enumerate(keyphrases) if words & set(k.casefold().split())), len(keyphrases))


def _with_article(topic: str, start: int, phrase: str) -> str:
    """The phrase with the article the topic wrote before it ("the Analytical Engine"), or "the" before a common
    noun's "of" phrase ("the impact of microplastics")."""
    if re.search(r"\bthe\s+$", topic[:start], re.IGNORECASE):
        return f"the {phrase}"
    return f"the {phrase}" if phrase[:1].islower() and " of " in phrase else phrase


def _shared_tails(topic: str, spans: Sequence[tuple[int, int]]) -> dict[int, str]:
    """Phrases coordinated with a next phrase that ends in an "of" tail ("conservation and loans of the museum"):
    index -> the tail it shares ("the museum")."""
    tails: dict[int, str] = {}
    for index in range(len(spans) - 1, 0, -1):
        (a, b), (c, d) = spans[index - 1], spans[index]
        tail = tails.get(index) or (topic[c:d].split(" of ", 1)[1] if " of " in topic[c:d] else "")
        if tail and " of " not in topic[a:b] and re.fullmatch(r"\s*(?:,|,?\s*(?:and|or))\s*", topic[b:c]):
            tails[index - 1] = tail
    return tails


def offline_sub_questions(*, topic: str, keyphrases: Sequence[str], n: int) -> list[str]:
    """Up to n - 1 readable sub-questions of topic (the plan puts the topic itself first)."""
    tokens, names = _tokens(topic)
    spans = _facets(topic, tokens)
    if not spans:
        return []
    phrases = [topic[a:b] for a, b in spans]
    shared = _shared_tails(topic, spans)
    for index, tail in shared.items():
        phrases[index] = f"{phrases[index]} of {tail}"
    named = [i for i, (a, b) in enumerate(spans) if any(a < ne and na < b for na, ne in names)]
    ranked = sorted(range(len(spans)), key=lambda i: (_rank(phrases[i], keyphrases), i))
    # The topic's head when it opens with a noun phrase ("impact of microplastics on ..."), else its first name,
    # else its best-ranked phrase ("Which suppliers deliver ... to Harrow Lane Bakery?": the bakery).
    opens = spans[0][0] == next((t.start for t in tokens), -1) and not tokens[0].text[:1].isdigit()
    subject_index = 0 if opens else named[0] if named else ranked[0]
    subject = _with_article(topic, spans[subject_index][0], phrases[subject_index])
    questions = [f"What is known about {subject}?"]
    # "conservation and loans of the museum": each coordinated phrase is asked about with its shared tail.
    questions += [
        f"What is known about {_with_article(topic, spans[i][0], phrases[i])}?"
        for i in sorted({*shared, *(i + 1 for i in shared)})
        if i != subject_index
    ]
    for token_index, token in enumerate(tokens):
        previous = tokens[token_index - 1].text.casefold() if token_index else ""
        if _YEAR.match(token.text) and previous in _DATING:
            tense = "has happened" if previous == "since" else "happened"
            questions.append(f"What {tense} to {subject} {previous} {token.text}?")
            break
    seen = {phrases[subject_index].casefold(), *(phrases[i].casefold() for i in {*shared, *(i + 1 for i in shared)})}
    for index in ranked:
        key = phrases[index].casefold()
        if key in seen or set(key.split()) <= set(phrases[subject_index].casefold().split()):
            continue
        seen.add(key)
        facet = _with_article(topic, spans[index][0], phrases[index])
        questions.append(f"How are {subject} and {facet} related?")
    about = next(iter(shared.values()), subject)  # coordinated phrases: the angles ask about what they share
    for word, angle in _ANGLES:  # while short: angles any noun phrase takes (not one repeating the subject's word)
        if word not in about.casefold().split():
            questions.append(angle.format(subject=about))
    return questions[: max(0, n - 1)]
