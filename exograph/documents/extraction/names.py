"""What a name looks like to a reader of the whole document (issue 25): rules the offline extractor applies to a
span's text (`name_tidy`) and to the resolved entities of a document (`extraction_common_terms`).

`name_tidy`, on the text of one span (PDF layout glues headings, running heads and table cells to names):
  * a footnote mark after a word ends the name ("Brendan Eich∗" -> "Brendan Eich", "Michael Franz+ Mozilla" ->
    "Michael Franz", "Mohammad R. Haghighat$" -> "Mohammad R. Haghighat");
  * a web address or a code comment ends it ("LuaJIT roadmap 2008 - http://…" -> "LuaJIT roadmap 2008", "Array //
    test whether …" -> "Array");
  * a date written after a name is not part of it ("Miers 2005-10-20" -> "Miers");
  * a running page head before a name is not part of it ("Page 8 Copyright Office" -> "Copyright Office");
  * a capitalised "The" inside a name starts a new one: the words before it are a heading ("INTRODUCTION The
    Digital Millennium Copyright Act" -> "The Digital Millennium Copyright Act");
  * a sentence adverb or a determiner last is the next sentence's first word ("Exceptions Finally" ->
    "Exceptions"), and so is a bare label word last ("... Tools Section", "... Formation Figure");
  * an opening parenthesis left open is cut with what follows when it opens an acronym ("Information
    Extraction (IE" -> "Information Extraction"), else closed ("Section 1203(c)(5)(B" -> "...(B)");
  * a run of capitalised words that repeats a word with no connector between the two is a table row or a heading
    run, not a name ("Gross Income Standard Rate Band Income Tax");
  * two numbers or more with no word are a table row ("17,542 0%", "2 2 2 0"): no name.

`extraction_common_terms`, on the document's resolved entities (the text of all its chunks at hand):
  * a name the document also writes in lowercase is a common term, not a name: one word ("Trace", "Office",
    "TITLE" as the heading writes "title") is no entity; several words ("Trace Trees" beside "trace trees") are a
    CONCEPT; a person whose last word the document writes in lowercase ("Nesting Algorithm", "Sharing Tools") is
    a CONCEPT;
  * an acronym of two to five capitals written once in a document of several passages, and not defined there, is
    no entity ("NY" in a reference, "HMM" in one sentence): one mention links nothing;
  * a word written twice over ("John John") is a table cell read twice when the document writes the word alone
    more often than doubled (a title such as "Bang Bang" is written doubled): no entity;
  * a name without a letter ("388", "28(1):134–174") is no entity; a person's name holds no digit (but an ordinal: "John
    Wallop, 2nd Earl of Portsmouth") or symbol ("Vince Oct 8-11", "Array //" are CONCEPTs);
  * a code (one or two letters and digits: "T16", "L1") is not a person, place or body: CONCEPT;
  * a one-word PERSON needs the document to show a person where it writes the word (a title, an initial, "et
    al.", a verb only people do, a pronoun that follows, a full name it belongs to: people.py); else it is a
    CONCEPT ("Java", "Ruby", "TraceMonkey" in a paper on compilers), or no entity when also written in lowercase;
  * a capitalised name that is a typed name and a place the document has, side by side ("Katrina New Orleans":
    table cells or a line break), is no entity of its own; not when the first is a person's name (a surname may
    be typed anything, "Jack London" is one person).
Dates and quantities are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from exograph.documents.extraction.people import person_shown, person_words
from exograph.documents.extraction.types import Entity, Extraction

_FOOTNOTE = re.compile(r"(?<=\w)[∗*†‡§¶+$]+(?:[,;]?\s.*)?$")
# A web address ends a name, with the dash or colon before it ("LuaJIT roadmap 2008 - http://lua-users.org/…"), and
# so does a code comment ("Array // test whether primes is an array"): reference lists and code listings in papers.
_URL_OR_COMMENT = re.compile(r"(?:^|\s+)(?:[-–—:]\s*)?(?:(?:https?://|www\.)\S*|//(?:\s.*)?)(?:\s.*)?$", re.DOTALL)
_ISO_DATE_AFTER = re.compile(r"(?<=[A-Za-z])\s+\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$")
_PAGE_HEAD = re.compile(r"^Page\s+\d+\s+(?=[A-Z])")
_INNER_THE = re.compile(r"(?<=\S)\s+(?=The\s+[A-Z])")
_LAST_WORD = re.compile(
    r"\s+(?:Finally|Especially|Additionally|Similarly|Consequently|Accordingly|Alternatively|Furthermore|Moreover|"
    r"However|Therefore|Thus|Hence|Also|Currently|Generally|Typically|Usually|Specifically|"
    r"Particularly|Notably|Recently|Previously|Likewise|Instead|Otherwise|Meanwhile|Lastly|Overall|"
    r"Any|Each|Every|Both|None|Section|Figure|Fig\.?|Table|Article|Chapter|Page)$"
)
_CONNECTORS = frozenset(
    "of on for and at upon de del der des van von zu an la le du the & y da di do dos das in mac mc ap ben bin ibn "
    "bint ua ó ní nic".split()
)
_NUMBER_TOKEN = re.compile(r"[$€£]?[\d.,:/()%+–-]*\d[\d.,:/()%+–-]*x?")


def _close_parenthesis(name: str) -> str:
    depth = 0
    opened = -1
    for at, char in enumerate(name):
        if char == "(":
            depth, opened = depth + 1, at if depth == 0 else opened
        elif char == ")" and depth:
            depth -= 1
    if not depth:
        return name
    if opened > 0 and name[opened - 1] == " " and re.fullmatch(r"\(\s*[A-Z][A-Z0-9&.-]*\s*", name[opened:]):
        return name[:opened].rstrip()
    return name + ")" * depth


def _repeats(words: Sequence[str]) -> bool:
    """Whether a word comes back in a run of capitalised words with no connector or lowercase word between."""
    seen: dict[str, int] = {}
    for index, word in enumerate(words):
        folded = word.casefold().strip(".,;:")
        if folded in _CONNECTORS or word[:1].islower():  # "Hamad bin Isa bin Salman": a particle between
            seen.clear()
            continue
        if folded in seen:
            return True
        seen[folded] = index
    return False


def name_tidy(name: str) -> str | None:
    """The name a span's text stands for, None when it stands for none (module docstring)."""
    name = _URL_OR_COMMENT.sub("", name).strip()
    name = _FOOTNOTE.sub("", name).strip()
    name = _PAGE_HEAD.sub("", name)
    name = _ISO_DATE_AFTER.sub("", name)
    parts = _INNER_THE.split(name)
    if len(parts) > 1 and parts[0].split()[-1].casefold() not in _CONNECTORS:
        name = parts[-1]
    while (cut := _LAST_WORD.sub("", name)) != name:
        name = cut
    name = _close_parenthesis(name).strip()
    words = name.split()
    if not words:
        return None
    if all(_NUMBER_TOKEN.fullmatch(word) for word in words):
        return name if len(words) == 1 else None
    if len(words) > 2 and _repeats(re.split(r"[\s/]+", name)):
        return None
    return name


_NAME_TYPES = frozenset({"PERSON", "ORGANIZATION", "LOCATION", "EVENT", "WORK", "PRODUCT", "CONCEPT"})
_ACRONYM = re.compile(r"[A-Z]{2,5}")
_CODE = re.compile(r"[A-Za-z]{1,2}\d+[A-Za-z]?")
_CAMEL = re.compile(r"[a-z][A-Z]")


def _written_lowercase(name: str, text: str) -> bool:
    """Whether the text writes the name (or its plural, or its singular) in lowercase as words of their own, not
    inside an address ("{yusuke,sekine}@cs.nyu.edu", "mozilla.org/js/spidermonkey/")."""
    lower = name.lower()
    if lower == name and not name.isupper():
        return True
    if lower[: max(3, len(lower) - 3)] not in text:
        return False  # the common answer, without a regular expression
    forms = {lower, lower + "s", lower + "es"}
    if lower.endswith("y"):
        forms.add(lower[:-1] + "ies")
    if lower.endswith("ies"):
        forms.add(lower[:-3] + "y")
    if lower.endswith("s") and len(lower) > 3:
        forms.add(lower[:-1])
    return any(
        _LOWER_BEFORE.match(text, at) and _LOWER_AFTER.match(text, at + len(form))
        for form in forms
        for at in _offsets(text, form)
    )


# A lowercase form written as words of its own: not inside an address (_written_lowercase).
_LOWER_BEFORE = re.compile(r"(?<![\w/@.,{-])")
_LOWER_AFTER = re.compile(r"(?![\w/@}-]|\.\w)")
# A word of its own, hyphens counted as part of a word.
_NOT_WORD_BEFORE = re.compile(r"(?<![\w-])")
_NOT_WORD_AFTER = re.compile(r"(?![\w-])")


def _offsets(text: str, part: str) -> Iterator[int]:
    """Every offset where the text writes `part` (overlapping ones included): found with str.find, where a pattern
    opening with a lookbehind would try every offset of a long document."""
    at = text.find(part)
    while at >= 0:
        yield at
        at = text.find(part, at + 1)


def _words_written(text: str, word: str, *, plural: bool = False) -> int:
    r"""How many times the text writes the word as a word of its own (or its plural in "s" when `plural`), counted
    left to right without overlapping, as re.findall counts (?<![\w-])word(?:s)?(?![\w-])."""
    count = 0
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if _NOT_WORD_BEFORE.match(text, at):
            if plural and text.startswith("s", end) and _NOT_WORD_AFTER.match(text, end + 1):
                end += 1
            elif not _NOT_WORD_AFTER.match(text, end):
                end = -1
            if end >= 0:
                count += 1
                at = text.find(word, end)
                continue
        at = text.find(word, at + 1)
    return count


def _verdict(entity: Entity, text: str, chunk_count: int, full_names: set[str]) -> str | None:
    """The entity's type after the document-wide rules, None to drop it (module docstring); `full_names` are the
    words of the document's people named in two words or more (people.person_words)."""
    if entity.type not in _NAME_TYPES:
        return entity.type
    name = entity.name
    words = name.split()
    if _ACRONYM.fullmatch(name):
        if len(name) >= 4 and _written_lowercase(name, text):
            return None
        written = _words_written(text, name, plural=True)
        if chunk_count > 1 and written < 2 and not entity.aliases:
            return None
        return entity.type
    if not any(c.isalpha() for c in name):
        return None  # "28(1):134–174", "388": a number or a citation, no name
    if entity.type == "PERSON" and re.search(r"[/:;()\[\]{}=<>@#]|\d(?!\d*(?:st|nd|rd|th)\b)", name):
        return "CONCEPT"  # "Vince Oct 8-11", "ACL-04", "Array //": no person's name
    if _CODE.fullmatch(name):
        return "CONCEPT" if entity.type in ("PERSON", "LOCATION", "ORGANIZATION") else entity.type
    if entity.type == "PERSON" and len(words) == 1 and not person_shown(name, text, full_names):
        # "Java", "TraceMonkey", "Aliquam": a word alone needs the document to show a person (people.py)
        return None if name[:1].isupper() and _written_lowercase(name, text) else "CONCEPT"
    if len(words) > 1 and len({w.casefold() for w in words}) == 1:
        alone = _words_written(text, words[0])
        return None if alone > 2 * text.count(name) else entity.type
    if _CAMEL.search(name) or any(c.isdigit() for c in name):
        return entity.type  # its shape makes it a name ("JavaScript", "Section 1201")
    if any(form == form.lower() and any(c.isalpha() for c in form) for form in (name, *entity.aliases)):
        return "CONCEPT" if len(words) > 1 else None
    if len(words) == 1:
        return None if name[:1].isupper() and _written_lowercase(name, text) else entity.type
    if entity.type == "CONCEPT":
        return entity.type
    if _written_lowercase(name, text):
        return "CONCEPT"
    if entity.type == "PERSON" and words[-1][:1].isupper() and _written_lowercase(words[-1], text):
        return "CONCEPT"
    return entity.type


def _two_names(name: str, names: dict[str, str]) -> bool:
    """Whether the name is a typed name other than a person's and a place side by side ("Katrina New Orleans"); a
    person's name is left alone: the model types a surname as anything ("Aretha Franklin" beside "Franklin"
    typed ORGANIZATION)."""
    words = name.split()
    for cut in range(1, len(words)):
        left, right = " ".join(words[:cut]).casefold(), " ".join(words[cut:]).casefold()
        if names.get(right) == "LOCATION" and names.get(left) in ("EVENT", "ORGANIZATION", "LOCATION", "WORK"):
            return True
    return False


def extraction_common_terms(extraction: Extraction, texts: Sequence[str]) -> Extraction:
    """The document's entities after the document-wide rules (module docstring): types changed, entities dropped
    with their mentions and relations."""
    text = "\n".join(texts)
    full_names = person_words(e.name for e in extraction.entities if e.type == "PERSON")
    kinds = {entity.name: _verdict(entity, text, len(texts), full_names) for entity in extraction.entities}
    names = {name.casefold(): kind for name, kind in kinds.items() if kind in _NAME_TYPES and kind != "CONCEPT"}
    for entity in extraction.entities:
        words = entity.name.split()
        if kinds[entity.name] in _NAME_TYPES and all(w[:1].isupper() for w in words) and _two_names(entity.name, names):
            kinds[entity.name] = None
    if all(kinds[e.name] == e.type for e in extraction.entities):
        return extraction
    entities = [
        Entity(e.name, kind, e.description, list(e.aliases))
        for e in extraction.entities
        if (kind := kinds[e.name]) is not None
    ]
    kept = {e.name: e.type for e in entities}
    mentions = [type(m)(m.chunk_id, m.name, kept[m.name]) for m in extraction.mentions if m.name in kept]
    relations = []
    for relation in extraction.relations:
        if relation.source in kept and relation.target in kept:
            relation.source_type, relation.target_type = kept[relation.source], kept[relation.target]
            relations.append(relation)
    return Extraction(entities=entities, mentions=mentions, relations=relations, warnings=list(extraction.warnings))
