"""Planner and synthesiser: the configured LLM provider (RESEARCH_PROVIDER), or `extractive` without one.

Extractive planning: the topic plus its keyphrases (yake) as sub-queries. Extractive synthesis uses chat's
writer (exograph/core/llm/extractive.py): each sub-question is answered from the sources' passages with
whole cited sentences, or marked unanswered when its best sentence matches below RELEVANCE_MIN (the chat
abstention bound); findings are those sentences, grouped by sub-question, each citing every source that
states it. Extracted relations are evidence, never findings rendered as prose.
With a generating provider the model writes both, and every citation is checked against the numbered
sources (numbers that point at nothing are dropped; a finding left without one is dropped too).

Which sources are read (`source_relevant`): a hit is read only if its title and snippet answer the topic by
the chat relevance measure (extractive.evidence_relevance: the best sentence's word and embedding match to
the topic, zero when the source lacks half the topic's names) at or above RELEVANCE_MIN.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from exograph.core.llm.extractive import RELEVANCE_MIN, Similarity, Statement, evidence_relevance, extract_answer
from exograph.core.llm.extractive_referents import passage_lead, pronoun_referents, resolved
from exograph.core.llm.extractive_text import whole_sentences

logger = logging.getLogger(__name__)

MAX_SUBQUERY_CHARS = 300
# A list mark a generated line opens with ("1.", "2)", "- ", "* "), never a topic's own figures ("after 2011").
_LIST_MARK = re.compile(r"^(?:[-*•]+|\d{1,2}[.)])\s*")
FINDING_CHARS = 600


@dataclass(frozen=True)
class SourceDigest:
    """What the synthesiser knows of one numbered source: its kind, title and text."""

    number: int
    kind: str
    title: str
    text: str
    document_id: str | None = None


@dataclass(frozen=True)
class Fact:
    """An extracted relation and the numbered sources that support it."""

    text: str
    numbers: tuple[int, ...]


@dataclass
class Synthesis:
    findings: list[dict[str, Any]] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)  # sub-questions the sources do not answer

    @property
    def covered(self) -> bool:
        """Whether the sources answer anything the session asked."""
        return bool(self.findings)


def _provider() -> str:
    return str(settings.RESEARCH_PROVIDER)


def _generate(*, model: str, system: str, prompt: str, max_tokens: int) -> str:
    from exograph.core.llm.providers import llm_generate, model_for

    reply = llm_generate(
        provider=_provider(),
        model=model_for(model),
        system=system,
        messages=[{"role": "user", "content": prompt}],
        max_tokens=max_tokens,
    )
    return reply.text


# --- planning ------------------------------------------------------------------------------------


def _keyphrases(topic: str, n: int) -> list[str]:
    import yake

    try:
        found = yake.KeywordExtractor(lan="en", n=3, dedupLim=0.7, top=n * 3).extract_keywords(topic)
    except Exception:  # noqa: BLE001 - keyphrases refine the plan; the topic alone still works
        logger.warning("yake failed on a research topic", exc_info=True)
        return []
    return [phrase.strip() for phrase, _score in found if phrase.strip()]


def _unique(queries: Sequence[str], n: int) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for query in queries:
        text = _LIST_MARK.sub("", " ".join(query.split()))[:MAX_SUBQUERY_CHARS].strip()
        key = text.casefold()
        if len(text) >= 3 and key not in seen:
            seen.add(key)
            out.append(text)
        if len(out) >= n:
            break
    return out


def research_plan(*, topic: str, model: str) -> list[str]:
    """Sub-queries for topic (the topic first). Network call with a generating provider: raises LLMError."""
    n = int(settings.RESEARCH_SUBQUERIES[model])
    if _provider() == "extractive":
        from research.services.planning import offline_sub_questions

        asked = offline_sub_questions(topic=topic[:MAX_SUBQUERY_CHARS], keyphrases=_keyphrases(topic, n), n=n)
        return _unique([topic[:MAX_SUBQUERY_CHARS], *asked], n)
    text = _generate(
        model=model,
        system="You plan literature research. Answer with search queries only, one per line, no numbering.",
        prompt=f"Write {n - 1} short search queries that together cover this research topic:\n\n{topic}",
        max_tokens=300,
    )
    return _unique([topic[:MAX_SUBQUERY_CHARS], *text.splitlines()], n)


# --- synthesis -----------------------------------------------------------------------------------


def source_relevance(*, topic: str, title: str, snippet: str, similarity: Similarity | None) -> float:
    """How well a search hit's title and snippet answer the topic (0..1; chat's evidence_relevance)."""
    head = " ".join(title.split()).rstrip(".!?")
    text = f"{head}. {snippet}" if head else snippet
    return evidence_relevance(question=topic, statements=[Statement(n=1, text=text)], similarity=similarity)


def source_relevant(*, topic: str, title: str, snippet: str, similarity: Similarity | None) -> bool:
    """The read test: the hit's title and snippet match the topic at least RELEVANCE_MIN."""
    return source_relevance(topic=topic, title=title, snippet=snippet, similarity=similarity) >= RELEVANCE_MIN


def _statements(sources: Sequence[SourceDigest]) -> list[Statement]:
    return [
        Statement(n=source.number, text=part, kind="passage", source=source.title)
        for source in sources
        for part in source.text[:20_000].split("\n")
        if part.strip()
    ]


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _out_of_context(sentence: str, source: SourceDigest | None) -> str:
    """The finding as read in a list, away from its passage: an opening pronoun names what it stands for there ("It
    was designed by X" -> "Skerryvore Lighthouse was designed by X"); other sentences as written."""
    if source is None:
        return sentence
    for part in source.text[:20_000].split("\n"):
        sentences = whole_sentences(part)
        at = next((i for i, s in enumerate(sentences) if _norm(s) == _norm(sentence)), None)
        if at:  # found, and not the passage's first sentence (which names its own subject or has no earlier one)
            lead = passage_lead(sentences, source.title, source.text[:20_000])
            return resolved(sentence, pronoun_referents(sentences[: at + 1], lead)[at])
    return sentence


def _whole(sentence: str) -> bool:
    """A finding is a whole sentence: it ends in . ! or ? (before closing quotes or brackets), never a heading
    line such as a note's title ('Glenmore Dam Survey - field notes')."""
    return sentence.rstrip().rstrip("\"'”’)]").endswith((".", "!", "?"))


def _extractive(
    *,
    topic: str,
    model: str,
    sources: Sequence[SourceDigest],
    sub_questions: Sequence[str],
    similarity: Similarity | None = None,
) -> Synthesis:
    limit = int(settings.RESEARCH_FINDINGS_MAX[model])
    synthesis = Synthesis()
    statements = _statements(sources)
    by_number = {source.number: source for source in sources}
    seen: set[str] = set()
    per_question = max(1, limit // max(1, len(sub_questions)))
    for question in sub_questions or [topic]:
        # The sub-question's best whole sentences (no short answer picked out of them: findings are statements).
        extracted = extract_answer(
            question=question, statements=statements, similarity=similarity, max_sentences=3, answer_type="manner"
        )
        if not extracted.answered:
            synthesis.unanswered.append(question)
            continue
        added = listed = 0  # listed: whole sentences that answer it but are already findings, or past the cap
        for n, sentence in extracted.sentences:
            key = _norm(sentence)
            if not _whole(sentence):
                continue
            if key in seen or added >= per_question or len(synthesis.findings) >= limit:
                listed += 1
                continue
            seen.add(key)
            added += 1
            # One statement, cited by every source that states it.
            numbers = sorted({s.number for s in sources if key in _norm(s.text)} | {n})
            text = _out_of_context(sentence, by_number.get(n))
            synthesis.findings.append({"text": text[:FINDING_CHARS], "citations": numbers, "sub_question": question})
        # Answered by whole sentences already listed (under an earlier sub-question) or past the findings' cap is
        # still answered: only a sub-question with no whole sentence for it is one the sources do not answer.
        if not added and not listed:
            synthesis.unanswered.append(question)
    for question in synthesis.unanswered[:3]:
        synthesis.open_questions.append(f"The sources do not answer: {question[:200]}")
    if len(sources) == 1 and synthesis.findings:
        synthesis.open_questions.append("Only one source was found; do other papers or articles confirm its findings?")
    if not sources:
        synthesis.open_questions.append(f"No sources were found on {topic[:200]}; which sources cover it?")
    return synthesis


_CITE = re.compile(r"\[(\d{1,3})\]")
_CITE_STRIP = re.compile(r"\s*\[\d{1,3}\]")


def _parse_llm(text: str, numbers: set[int], limit: int) -> Synthesis:
    start, end = text.find("{"), text.rfind("}")
    data = json.loads(text[start : end + 1]) if start >= 0 and end > start else {}
    synthesis = Synthesis()
    for item in (data.get("findings") or [])[:limit] if isinstance(data, dict) else []:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        body = _CITE_STRIP.sub("", item["text"]).strip()[:FINDING_CHARS]
        cited = [int(n) for n in item.get("citations") or [] if isinstance(n, int) and n in numbers]
        cited += [int(n) for n in _CITE.findall(item["text"]) if int(n) in numbers]
        if body and cited:
            synthesis.findings.append({"text": body, "citations": sorted(set(cited))})
    for question in (data.get("open_questions") or [])[:5] if isinstance(data, dict) else []:
        if isinstance(question, str) and question.strip():
            synthesis.open_questions.append(question.strip()[:300])
    for question in (data.get("unanswered") or [])[:10] if isinstance(data, dict) else []:
        if isinstance(question, str) and question.strip():
            synthesis.unanswered.append(question.strip()[:300])
    return synthesis


def research_synthesise(
    *,
    topic: str,
    model: str,
    sources: Sequence[SourceDigest],
    facts: Sequence[Fact],
    sub_questions: Sequence[str] = (),
    similarity: Similarity | None = None,
) -> Synthesis:
    """Key findings (each citing source numbers), grouped by sub-question, the sub-questions the sources do not
    answer, and open questions. Network call with a generating provider: raises LLMError; an answer that is not
    the asked JSON falls back to the extractive synthesis."""
    questions = list(sub_questions) or [topic]
    if _provider() == "extractive" or not sources:
        return _extractive(topic=topic, model=model, sources=sources, sub_questions=questions, similarity=similarity)
    limit = int(settings.RESEARCH_FINDINGS_MAX[model])
    share = 6000 if model == "snap" else 20000
    per_source = max(500, share // max(1, len(sources)))
    listing = "\n\n".join(f"[{s.number}] ({s.kind}) {s.title}\n{s.text[:per_source]}" for s in sources)
    relations = "\n".join(f"- {f.text} {''.join(f'[{n}]' for n in f.numbers)}" for f in facts[:30])
    asked = "\n".join(f"- {q}" for q in questions)
    prompt = (
        f"Research topic: {topic}\n\nSub-questions:\n{asked}\n\nNumbered sources:\n{listing}\n\n"
        f"Relations extracted from them (evidence, not sentences to copy):\n{relations}\n\n"
        f"Write at most {limit} key findings, each one short sentence of your own supported by the sources, and "
        "up to 3 open questions. List the sub-questions the sources do not answer. Answer with JSON only: "
        '{"findings": [{"text": "...", "citations": [1, 2]}], "open_questions": ["..."], "unanswered": ["..."]}'
    )
    text = _generate(
        model=model,
        system="You write research summaries. Cite only the numbered sources given. Answer with JSON only.",
        prompt=prompt,
        max_tokens=int(settings.CHAT_MAX_OUTPUT_TOKENS) * 2,
    )
    try:
        synthesis = _parse_llm(text, {s.number for s in sources}, limit)
    except (ValueError, TypeError):
        synthesis = Synthesis()
    if not synthesis.findings:
        logger.info("research synthesis answer was not usable JSON; writing the extractive one")
        fallback = _extractive(
            topic=topic, model=model, sources=sources, sub_questions=questions, similarity=similarity
        )
        synthesis.findings = fallback.findings
        synthesis.unanswered = fallback.unanswered
        synthesis.open_questions = synthesis.open_questions or fallback.open_questions
    return synthesis


def summary_line(*, topic: str, papers: int, articles: int, local: int, own: int = 0) -> str:
    """ "Found N academic papers, M technical articles and K sources from your own documents on …": the kinds of
    source read, those of none left out (`own` of the `local` ones are the owner's own documents, the rest the World
    Graph's); "Found no sources on …" when none was read."""

    def plural(n: int, one: str, many: str) -> str:
        return f"{n} {one if n == 1 else many}"

    parts = [
        *([plural(papers, "academic paper", "academic papers")] if papers else []),
        *([plural(articles, "technical article", "technical articles")] if articles else []),
        *([f"{plural(own, 'source', 'sources')} from your own documents"] if own else []),
        *([f"{plural(local - own, 'source', 'sources')} from the platform's World Graph"] if local > own else []),
    ]
    found = ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else (parts[0] if parts else "no sources")
    about = " ".join(topic.split())[:300]
    return f"Found {found} on {about}" + ("" if about[-1:] in ".!?" else ".")


def coverage_line(*, topic: str, sources: int, covered: bool, unanswered: Sequence[str], asked: int) -> str:
    """What the sources answered: nothing (the synthesis was not charged), or the sub-questions they did not."""
    if not sources:
        return f"No source read covers {topic[:200]}: no findings were written and the synthesis was not charged."
    if not covered:
        return (
            f"The sources read do not cover {topic[:200]}: no findings were written and the synthesis was not charged."
        )
    if not unanswered:
        return f"The sources answer all {asked} sub-questions." if asked > 1 else "The sources answer the topic."
    listed = "; ".join(f"“{q[:120]}”" for q in unanswered[:5])
    return f"The sources do not answer {len(unanswered)} of {asked} sub-questions: {listed}."
