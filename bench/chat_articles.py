"""Chat over articles as users upload them: multi-paragraph text with a title line, pronouns and quantities.

The HotpotQA/MuSiQue/2Wiki passages are one clean paragraph each; what users upload is not. This bench ingests
the articles of a set (bench/data/articles.json, the development set; bench/data/articles-heldout.json, its
held-out twin, measured and never read for tuning) into one graph through the product's batch text ingest, asks
every question with each engine through the chat service, and reports per engine:

- short-answer EM and F1 against the gold answers (bench/chat.py's scoring);
- "holds": the share of answers whose text (short answer and sentences) holds a gold answer;
- answered %: the share not refused ("not in the documents");
- off-topic refused %: questions the articles do not touch, which must be refused;
- median answer time.

    .venv/bin/python bench/chat_articles.py [--set bench/data/articles.json] [--out chat-articles] [--state DIR]

Results: bench/results/{out}.json, {out}.md and {out}-questions.json (every answer, for reading failures).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.chat import ENGINES, answer_text, exact_match, f1_score, normalize_answer  # noqa: E402
from bench.retrieval import RESULTS, Dataset, _pool, dataset_graph  # noqa: E402

DEFAULT_SET = ROOT / "bench" / "data" / "articles.json"


def holds(answer: str, golds: list[str]) -> bool:
    """The answer's text holds one of the gold answers (normalised: case, articles, punctuation)."""
    text = f" {normalize_answer(answer)} "
    return any(f" {normalize_answer(gold)} " in text for gold in golds if normalize_answer(gold))


def run(path: Path, *, state: Path | None, engines: tuple[str, ...], out: str) -> dict[str, Any]:
    import django

    django.setup()
    from django.core.management import call_command

    from bench.chat import _ask

    call_command("migrate", verbosity=0)
    spec = json.loads(path.read_text())
    dataset = Dataset(name=path.stem)
    for article in spec["articles"]:
        _pool(dataset, article["title"], article["text"])
    user, graph, ingest_seconds, _, _ = dataset_graph(dataset, limit=None, state=state)
    results: dict[str, Any] = {
        "set": str(path.relative_to(ROOT)),
        "articles": len(spec["articles"]),
        "questions": len(spec["questions"]),
        "off_topic": len(spec.get("off_topic", [])),
        "near_topic": len(spec.get("near_topic", [])),
        "ingest_seconds": round(ingest_seconds, 1),
        "machine": platform.platform(),
        "engines": {},
    }
    rows: dict[str, list[dict[str, Any]]] = {}
    for engine in engines:
        em: list[float] = []
        f1: list[float] = []
        held: list[bool] = []
        answered: list[bool] = []
        ms: list[float] = []
        rows[engine] = []
        for item in spec["questions"]:
            t0 = time.perf_counter()
            reply = _ask(user=user, graph=graph, question=item["question"], engine=engine)
            ms.append((time.perf_counter() - t0) * 1000)
            short = str(reply.get("short_answer") or "")
            full = answer_text(str(reply["answer"]))
            em.append(exact_match(short or full, item["answers"]))
            f1.append(f1_score(short or full, item["answers"]))
            held.append(holds(f"{short} {full}", item["answers"]))
            answered.append(bool(reply.get("answered", True)))
            rows[engine].append(
                {
                    "question": item["question"],
                    "gold": item["answers"][0],
                    "short_answer": short,
                    "answer": full[:400],
                    "em": em[-1],
                    "holds": held[-1],
                    "answered": answered[-1],
                    "support": reply.get("support_score"),
                }
            )
        refused = [
            not _ask(user=user, graph=graph, question=q, engine=engine)["answered"] for q in spec.get("off_topic", [])
        ]
        # near-topic: questions about things the articles name whose asked link they never state
        near = [
            not _ask(user=user, graph=graph, question=q, engine=engine)["answered"] for q in spec.get("near_topic", [])
        ]
        n = max(1, len(em))
        results["engines"][engine] = {
            "em": round(100 * sum(em) / n, 1),
            "f1": round(100 * sum(f1) / n, 1),
            "holds": round(100 * sum(held) / n, 1),
            "answered": round(100 * sum(answered) / n, 1),
            "off_topic_refused": round(100 * sum(refused) / max(1, len(refused)), 1),
            "near_topic_refused": round(100 * sum(near) / max(1, len(near)), 1) if near else None,
            "median_ms": round(statistics.median(ms), 1) if ms else 0.0,
        }
        print(f"{engine}: {results['engines'][engine]}", flush=True)
    results["load_average"] = Path("/proc/loadavg").read_text().split()[:3]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{out}.json").write_text(json.dumps(results, indent=2) + "\n")
    (RESULTS / f"{out}-questions.json").write_text(json.dumps(rows, indent=1) + "\n")
    (RESULTS / f"{out}.md").write_text(markdown(results))
    return results


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# Chat over uploaded articles (bench/chat_articles.py)",
        "",
        f"Set {results['set']}: {results['articles']} articles, {results['questions']} questions, "
        f"{results['off_topic']} off-topic, {results.get('near_topic', 0)} near-topic; model snap, the offline extractive default. "
        f"Load average {' '.join(results['load_average'])}.",
        "",
        "| engine | EM | F1 | answer holds gold % | answered % | off-topic refused % | near-topic refused % "
        "| median ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for engine, m in results["engines"].items():
        lines.append(
            f"| {engine} | {m['em']} | {m['f1']} | {m['holds']} | {m['answered']} | {m['off_topic_refused']} "
            f"| {m.get('near_topic_refused') if m.get('near_topic_refused') is not None else '-'} | {m['median_ms']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET)
    parser.add_argument("--out", default=None, help="results file stem in bench/results; default chat-<set name>")
    parser.add_argument("--state", type=Path, default=None)
    parser.add_argument("--engines", default=",".join(ENGINES))
    args = parser.parse_args()
    from bench.common import start_services

    server, _ = start_services("exo-bench-articles-", eager_tasks=True, directory=args.state)
    try:
        run(
            args.set.resolve(),
            state=args.state,
            engines=tuple(e for e in args.engines.split(",") if e),
            out=args.out or f"chat-{args.set.stem}",
        )
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
