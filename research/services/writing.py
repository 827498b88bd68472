"""Planner and synthesiser: the configured LLM provider (RESEARCH_PROVIDER), or `extractive` without one.

Extractive planning: the topic plus its keyphrases (yake) as sub-queries. Extractive synthesis: findings
from the best-supported extracted relations (how many of the session's sources carry them) and the
sentences of the sources that share most with the topic, each citing the sources it came from.
With a generating provider the model writes both, and every citation is checked against the numbered
sources (numbers that point at nothing are dropped; a finding left without one is dropped too).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from exograph.core.llm.extractive import _terms, sentences_of

logger = logging.getLogger(__name__)

MAX_SUBQUERY_CHARS = 300
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
        text = " ".join(query.split())[:MAX_SUBQUERY_CHARS].strip(" -*•0123456789.)\t")
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
        return _unique([topic[:MAX_SUBQUERY_CHARS], *_keyphrases(topic, n)], n)
    text = _generate(
        model=model,
        system="You plan literature research. Answer with search queries only, one per line, no numbering.",
        prompt=f"Write {n - 1} short search queries that together cover this research topic:\n\n{topic}",
        max_tokens=300,
    )
    return _unique([topic[:MAX_SUBQUERY_CHARS], *text.splitlines()], n)


# --- synthesis -----------------------------------------------------------------------------------


def _sentence_candidates(topic: str, sources: Sequence[SourceDigest]) -> list[tuple[float, int, str]]:
    wanted = _terms(topic)
    scored: list[tuple[float, int, str]] = []
    for source in sources:
        for sentence in sentences_of(source.text[:20_000]):
            if len(sentence) < 30 or len(sentence) > FINDING_CHARS:
                continue
            overlap = len(wanted & _terms(sentence))
            if overlap:
                scored.append((overlap / (1 + len(wanted)), source.number, sentence))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return scored


def _extractive(*, topic: str, model: str, sources: Sequence[SourceDigest], facts: Sequence[Fact]) -> Synthesis:
    limit = int(settings.RESEARCH_FINDINGS_MAX[model])
    synthesis = Synthesis()
    seen: set[str] = set()
    # Relations several sources agree on first: they are the best supported.
    for fact in sorted(facts, key=lambda f: (-len(f.numbers), f.text))[: max(1, limit // 2)]:
        key = fact.text.casefold()
        if key in seen:
            continue
        seen.add(key)
        synthesis.findings.append({"text": fact.text, "citations": list(fact.numbers)})
    for _score, number, sentence in _sentence_candidates(topic, sources):
        if len(synthesis.findings) >= limit:
            break
        key = sentence.casefold()
        if key in seen:
            continue
        seen.add(key)
        # One sentence, cited by every source that states it too.
        numbers = sorted({number} | {s.number for s in sources if s.number != number and sentence in s.text})
        synthesis.findings.append({"text": sentence, "citations": numbers})
    covered = {n for finding in synthesis.findings for n in finding["citations"]}
    if len(sources) == 1:
        synthesis.open_questions.append("Only one source was found; do other papers or articles confirm its findings?")
    for source in sources:
        if source.number not in covered and len(synthesis.open_questions) < 3:
            synthesis.open_questions.append(f"How does “{source.title[:120]}” [{source.number}] bear on {topic[:120]}?")
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
    return synthesis


def research_synthesise(*, topic: str, model: str, sources: Sequence[SourceDigest], facts: Sequence[Fact]) -> Synthesis:
    """Key findings (each citing source numbers) and open questions. Network call with a generating provider:
    raises LLMError; an answer that is not the asked JSON falls back to the extractive synthesis."""
    if _provider() == "extractive" or not sources:
        return _extractive(topic=topic, model=model, sources=sources, facts=facts)
    limit = int(settings.RESEARCH_FINDINGS_MAX[model])
    share = 6000 if model == "snap" else 20000
    per_source = max(500, share // max(1, len(sources)))
    listing = "\n\n".join(f"[{s.number}] ({s.kind}) {s.title}\n{s.text[:per_source]}" for s in sources)
    relations = "\n".join(f"- {f.text} {''.join(f'[{n}]' for n in f.numbers)}" for f in facts[:30])
    prompt = (
        f"Research topic: {topic}\n\nNumbered sources:\n{listing}\n\nRelations extracted from them:\n{relations}\n\n"
        f"Write at most {limit} key findings, each supported by the sources, and up to 3 open questions. Answer "
        'with JSON only: {"findings": [{"text": "...", "citations": [1, 2]}], "open_questions": ["..."]}'
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
        fallback = _extractive(topic=topic, model=model, sources=sources, facts=facts)
        synthesis.findings = fallback.findings
        synthesis.open_questions = synthesis.open_questions or fallback.open_questions
    return synthesis


def summary_line(*, topic: str, papers: int, articles: int, local: int) -> str:
    """ "Found N academic papers and M technical articles on …" (plus the platform's own sources)."""

    def plural(n: int, one: str, many: str) -> str:
        return f"{n} {one if n == 1 else many}"

    line = f"Found {plural(papers, 'academic paper', 'academic papers')} and {plural(articles, 'technical article', 'technical articles')}"
    if local:
        line += f" (plus {plural(local, 'source', 'sources')} from the platform's World Graph)"
    return f"{line} on {topic[:300]}."
