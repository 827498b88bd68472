"""Chat generation: the answer a provider writes over numbered evidence (chat_message_send's middle step).

The extractive default reads the evidence itself (exograph/core/llm/extractive.py); an LLM provider gets the
evidence block, the chain the extractive reader followed, and SYSTEM_PROMPT (ponder: a second CHECK_PROMPT
pass). The extractive reader's sense of meaning (`_similarity`) keeps the sentence vectors it embedded.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from django.conf import settings

from exograph.chat.events import ChatStream
from exograph.chat.tokens import token_count
from exograph.core.errors import ExoGraphError
from exograph.core.llm.extractive import RELEVANCE_MIN, EntityTypes, Similarity, Statement, extract_answer
from exograph.core.llm.providers import context_tokens_for, llm_generate, model_for
from exograph.graphs.embeddings import embedding_similarity, get_embedder

if TYPE_CHECKING:
    from exograph.chat.services import ChatPlan

NOT_IN_DOCUMENTS = "Not in the documents"
SYSTEM_PROMPT = (
    "You answer questions using only the numbered evidence below. Each item is labelled with its origin "
    "(private: the user's own graph; world: the shared World Graph; web: a web page) and its kind (passage, "
    "fact, relation, entity). Start with the short answer alone (a name, place, date, number, yes or no, or a "
    'short phrase) and its citations, e.g. "Acme Corp [1][2].", then at most three sentences that support '
    "it, each citing the numbers of the items it rests on, e.g. [2] or [1, 3]. When the answer takes two steps "
    "(the question names one thing and the evidence links it to another), cite every link. Never state a "
    "figure or a name the cited evidence does not contain, and never copy a relation's wording as a sentence. "
    f'If the evidence does not answer the question, reply with "{NOT_IN_DOCUMENTS}:" followed by one '
    "sentence on what the closest items are about, and nothing else."
)
CHECK_PROMPT = (
    "Check the draft answer below against the numbered evidence. Keep sentences whose figures and names "
    "their cited items contain; rewrite or drop the others; keep the [n] citations and the short answer "
    f'first. If the evidence does not answer the question, reply with "{NOT_IN_DOCUMENTS}:" and one sentence '
    "on what the closest items are about. Reply with the revised answer only."
)
# A reply saying the evidence does not answer (the prompt's phrase, or the usual ways of saying it).
_NOT_ANSWERED = re.compile(
    r"^\W*(not in (the|your) documents|(the|your) (documents|evidence|graphs?) (do not|don't|does not|doesn't) "
    r"(say|hold|contain|answer|mention))",
    re.IGNORECASE,
)

TokenSink = Callable[[str], None]


def _evidence_block(items: list[dict[str, Any]], budget: int) -> str:
    """The numbered evidence as the model reads it: facts, relations and entities first (the graph's links,
    with their numbers), then passages."""
    lines: list[str] = []
    used = 0
    facts = [item for item in items if item.get("kind") in ("fact", "relation", "entity")]
    passages = [item for item in items if item.get("kind") not in ("fact", "relation", "entity")]
    for item in [*facts, *passages]:
        where = item.get("source") or item.get("url") or item.get("graph_id") or ""
        text = " ".join(str(item["text"]).split())  # one line an item: a passage's paragraph breaks become spaces
        line = f"[{item['n']}] ({item['origin']}, {item['kind']}{', ' + where if where else ''}) {text}"
        cost = token_count(line)
        if used + cost > budget:
            break
        used += cost
        lines.append(line)
    return "\n".join(lines)


def _generate(
    *,
    plan: ChatPlan,
    items: list[dict[str, Any]],
    history: list[dict[str, str]],
    on_token: TokenSink,
    stream: ChatStream,
) -> dict[str, Any]:
    provider = settings.CHAT_PROVIDER
    statements = _statements(items)
    similarity = _similarity()
    if provider == "extractive":
        # Entity, fact and relation items are evidence shown as facts, never prose: the extractive model
        # answers with whole passage sentences (exograph/core/llm/extractive.py) or says the documents don't.
        # A follow-up is read after the earlier question it leans on ("And who sold it?": sold what).
        extracted = extract_answer(
            question=plan.asked, statements=statements, similarity=similarity, entity_types=_entity_types()
        )
        for piece in answer_pieces(extracted.text):  # sentence by sentence: the short answer arrives first
            on_token(piece)
        return {
            "text": extracted.text,
            "provider": "extractive",
            "model": "extractive",
            "input_tokens": 0,
            "output_tokens": 0,
            "answered": extracted.answered,
            "short_answer": extracted.short,
            "relevance": extracted.relevance,
            "confidence": extracted.confidence,
        }
    # The extractive reader's view of the same evidence: whether it answers, and the chain it followed.
    reading = extract_answer(question=plan.asked, statements=statements, similarity=similarity)
    model = model_for(plan.model)
    context = context_tokens_for(plan.model)
    evidence = _evidence_block(items, budget=max(256, context - settings.CHAT_MAX_OUTPUT_TOKENS))
    # The links of a chain the extractive reader followed (the question's subject to the far end) are named.
    linked = ""
    if len(reading.chain) > 1:
        linked = "Linked items (the question's subject to its answer): " + ", ".join(f"[{n}]" for n in reading.chain)
        linked += "\n\n"
    system = f"{SYSTEM_PROMPT}\n\n{linked}Evidence:\n{evidence or '(none)'}"
    messages = [*history, {"role": "user", "content": plan.message}]
    first = llm_generate(
        provider=provider,
        model=model,
        system=system,
        messages=messages,
        max_tokens=settings.CHAT_MAX_OUTPUT_TOKENS,
        on_token=on_token if plan.model == "snap" else None,
    )
    reply = first
    if plan.model == "ponder":  # a second pass checks the draft against the evidence
        stream.status("checking")
        reply = llm_generate(
            provider=provider,
            model=model,
            system=f"{CHECK_PROMPT}\n\nEvidence:\n{evidence or '(none)'}",
            messages=[{"role": "user", "content": f"Question: {plan.message}\n\nDraft answer:\n{first.text}"}],
            max_tokens=settings.CHAT_MAX_OUTPUT_TOKENS,
            on_token=on_token,
        )
    # Answered when the evidence covers the question (the extractive bound) and the model did not say otherwise.
    said_not = bool(_NOT_ANSWERED.search(reply.text))
    answered = reading.relevance >= RELEVANCE_MIN and not said_not
    return {
        "text": reply.text,
        "provider": reply.provider,
        "model": reply.model,
        "input_tokens": first.input_tokens + (reply.input_tokens if reply is not first else 0),
        "output_tokens": first.output_tokens + (reply.output_tokens if reply is not first else 0),
        "answered": answered,
        "short_answer": short_answer_of(reply.text) if answered else "",
        "relevance": reading.relevance,
    }


_PIECE = re.compile(r".*?(?:[.!?](?:\s+|$)|\n+|$)", re.S)


def answer_pieces(text: str) -> list[str]:
    """The answer's sentences (each with the space after it), in order: joined, they are the text exactly."""
    return [piece for piece in _PIECE.findall(text) if piece]


def short_answer_of(reply: str) -> str:
    """The short answer a model's reply starts with: its first sentence without citations, when short."""
    first = re.split(r"(?<=[.!?])\s+|\n", reply.strip(), maxsplit=1)[0]
    text = re.sub(r"\s*\[[\d,\s-]+\]", "", first).strip().rstrip(".!?").strip()
    return text if 0 < len(text.split()) <= 12 else ""


def _statements(items: list[dict[str, Any]]) -> list[Statement]:
    return [
        Statement(
            n=int(item["n"]),
            text=str(item["text"]),
            kind=str(item.get("kind") or ""),
            source=str(item.get("source") or ""),
        )
        for item in items
    ]


# Evidence sentences the extractive reader has embedded, by (embedder, text): a graph's sentences come back
# question after question, and embedding them was most of a snap answer's time (bench/chat.py, cProfile).
SENTENCE_VECTORS_MAX = 8192
_sentence_vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
_sentence_lock = threading.Lock()


def _similarity() -> Similarity | None:
    """Cosine similarity of the question to evidence sentences (the extractive reader's sense of meaning), the
    sentences' and questions' vectors kept in a per-process LRU (SENTENCE_VECTORS_MAX): a text is embedded once,
    and nothing is embedded when every text is known; None without an embedder."""
    try:
        embedder = get_embedder()
    except ExoGraphError:
        return embedding_similarity()

    def similarity(query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        wanted = list(dict.fromkeys([query, *texts]))  # the question's own vector is kept like a sentence's
        with _sentence_lock:
            known = {t: v for t in wanted if (v := _sentence_vectors.get((embedder.name, t))) is not None}
            for text in known:
                _sentence_vectors.move_to_end((embedder.name, text))
        missing = [t for t in wanted if t not in known]
        try:
            fresh = dict(zip(missing, embedder.embed(missing), strict=True)) if missing else {}
        except ExoGraphError:
            return [0.0] * len(texts)
        with _sentence_lock:
            for text, vector in fresh.items():
                _sentence_vectors[(embedder.name, text)] = vector
            while len(_sentence_vectors) > SENTENCE_VECTORS_MAX:
                _sentence_vectors.popitem(last=False)
        every = {**known, **fresh}
        head = every[query]
        return [sum(a * b for a, b in zip(head, every[t], strict=False)) for t in texts]

    return similarity


# The typed names of evidence sentences the extractive reader has read, by text (the offline extractor's NER).
_sentence_types: OrderedDict[str, list[tuple[str, str]]] = OrderedDict()


def _entity_types() -> EntityTypes | None:
    """The NER's typed names of texts (documents/extraction/ner.py, the model the offline extractor uses), kept in
    a per-process LRU (SENTENCE_VECTORS_MAX texts): the extractive reader types its short answer's candidates by
    them (a person is not the answer to "which city"); None when the model is not installed."""
    from exograph.documents.extraction.ner import ner_model, ner_spans

    if ner_model() is None:
        return None

    def types(texts: Sequence[str]) -> list[list[tuple[str, str]]] | None:
        with _sentence_lock:
            known = {t: v for t in texts if (v := _sentence_types.get(t)) is not None}
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        spans = ner_spans(missing) if missing else []
        if spans is None:
            return None
        fresh = {t: [(s.name, s.type) for s in row] for t, row in zip(missing, spans, strict=True)}
        with _sentence_lock:
            for text, row in fresh.items():
                _sentence_types[text] = row
                _sentence_types.move_to_end(text)
            while len(_sentence_types) > SENTENCE_VECTORS_MAX:
                _sentence_types.popitem(last=False)
        every = {**known, **fresh}
        return [every[t] for t in texts]

    return types
