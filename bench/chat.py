"""`make bench-chat`: answer quality of chat engines rag and graph on the eval development questions (a benchmark).

For each dataset under --data (the same folders and loading as bench/retrieval.py, whose corpus ingest this
reuses: each passage a text document in one private graph, through the product's batch text ingest), every
development question is sent as a chat message through the chat service itself (chat_message_prepare +
chat_message_send, model snap, the configured provider — extractive by default, no network) with engine
`rag` and engine `graph`, in a fresh session each. Reported per dataset and engine:

  * recall of the gold passages among the passages of the evidence handed to the model (the evidence the
    message stored, in the order the model saw it), top 5 and top 10 distinct passages;
  * answer exact match and token F1 against the gold answer and its aliases (SQuAD normalisation: lower
    case, no punctuation or articles), and the mean support score of the citation check;
  * the median end-to-end time of the message, and the share of it spent in retrieval (the same evidence
    read — chat.evidence.evidence_retrieve with the message's arguments — timed on its own right after).

  * the answer scored is the short answer the reply carries (`short_answer`) when there is one, else the
    answer text without citation marks; `answered` is the share the model answered (not "your documents
    don't say"), and the mean support of right (F1 >= 0.5) and wrong answers shows its calibration;
  * abstention: questions of the next dataset asked against this dataset's graph (--abstain N each), the
    share refused ("Your documents don't say ...");
  * chains (bench/data/chains.json, written for this project): two-link chains with paraphrased questions
    and a distractor each, all in one graph; the share whose short answer is the far end with both link
    documents cited.

--split validation runs HippoRAG's train sets (hipporag_*_train_100.json: HotpotQA, MuSiQue), a validation set
nothing was tuned on.

The bench calls the service, not the REST view, so nothing is charged. Results: bench/results/chat.json and
bench/results/chat.md.

    .venv/bin/python bench/chat.py [--data DIR] [--limit N] [--datasets ...] [--state DIR]

--state DIR reuses the graphs a `bench/retrieval.py --state DIR` run ingested (same --limit), so the corpus
is ingested once for both benchmarks.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import string
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.retrieval import DEFAULT_DATA, RESULTS, dataset_graph, dataset_load, recall_at_k  # noqa: E402

ENGINES = ("rag", "graph")
CHAINS = ROOT / "bench" / "data" / "chains.json"
OUT = "chat"  # results file stem (--out)


# --- answer scoring (pure; tested by tests/bench/test_chat_scoring.py) ---------------------------


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    """1.0 if the normalised prediction equals a normalised gold answer."""
    guess = normalize_answer(prediction)
    return 1.0 if any(guess == normalize_answer(g) for g in golds if g) else 0.0


def f1_score(prediction: str, golds: Sequence[str]) -> float:
    """The best token F1 of the prediction against any gold answer (SQuAD)."""
    best = 0.0
    predicted = normalize_answer(prediction).split()
    for gold in golds:
        truth = normalize_answer(gold).split()
        if not predicted or not truth:
            continue
        common = sum((Counter(predicted) & Counter(truth)).values())
        if common == 0:
            continue
        precision, recall = common / len(predicted), common / len(truth)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def answer_text(answer: str) -> str:
    """The answer without its citation marks ([1], [2, 3]) for scoring."""
    return " ".join(re.sub(r"\[\d+(?:\s*,\s*\d+)*\]", " ", answer).split())


# --- run ----------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--datasets", default="2wikimultihopqa,hotpotqa,musique")
    parser.add_argument("--state", type=Path, default=None, help="reuse the graphs of bench/retrieval.py --state DIR")
    parser.add_argument("--out", default="chat", help="results file stem in bench/results; default chat")
    parser.add_argument("--split", choices=("dev", "validation"), default="dev")
    parser.add_argument("--abstain", type=int, default=10, help="other-dataset questions per graph (0: none)")
    parser.add_argument("--chains", type=Path, default=CHAINS, help="chain file; a missing file skips the chains")
    parser.add_argument("--engines", default=",".join(ENGINES))
    args = parser.parse_args()
    global OUT
    OUT = args.out
    from bench.common import start_services

    server, _ = start_services("exo-bench-chat-", eager_tasks=True, directory=args.state)
    try:
        run(
            args.data,
            limit=args.limit,
            names=[n for n in args.datasets.split(",") if n],
            state=args.state,
            split=args.split,
            abstain=args.abstain,
            chains=args.chains,
            engines=tuple(e for e in args.engines.split(",") if e),
        )
    finally:
        if server is not None:
            server.stop()


def run(
    data: Path,
    *,
    limit: int | None,
    names: list[str],
    state: Path | None,
    split: str = "dev",
    abstain: int = 0,
    chains: Path | None = None,
    engines: tuple[str, ...] = ENGINES,
) -> None:
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "datasets": {},
        "limit": limit,
        "provider": settings.CHAT_PROVIDER,
        "model": "snap",
        "machine": platform.platform(),
        "split": split,
    }
    graphs: list[tuple[str, Any, Any, Any]] = []
    for name in names:
        folder = data / name
        if split == "validation":
            dataset = validation_load(folder, limit=limit) if folder.is_dir() else None
        else:
            dataset = dataset_load(folder, limit=limit) if folder.is_dir() else None
        if dataset is None:
            print(f"{name}: no dataset in {folder}, skipped")
            continue
        user, graph, ingest_seconds, doc_to_keys, reused = dataset_graph(dataset, limit=limit, state=state)
        graphs.append((name, user, graph, dataset))
        measured = {engine: ask_all(user=user, graph=graph, dataset=dataset, doc_to_keys=doc_to_keys, engine=engine)
                    for engine in engines}  # fmt: skip
        for engine, summary in measured.items():
            print(f"{name} {engine}: {summary}", flush=True)
        results["datasets"][name] = {
            "questions": len(dataset.questions),
            "passages": len(dataset.passages),
            "ingest_seconds": round(ingest_seconds, 1),
            "ingest_reused": reused,
            "engines": measured,
        }
        results["total_seconds"] = round(time.perf_counter() - started, 1)
        results_write(results)
    if abstain and len(graphs) > 1:
        results["abstention"] = {}
        for index, (name, user, graph, _) in enumerate(graphs):
            other_name, _, _, other = graphs[(index + 1) % len(graphs)]
            asked = [q for q, _ in other.questions[:abstain]]
            results["abstention"][f"{other_name} on {name}"] = {
                engine: ask_off_topic(user=user, graph=graph, questions=asked, engine=engine) for engine in engines
            }
            print(f"abstention {other_name} on {name}: {results['abstention'][f'{other_name} on {name}']}")
    if chains is not None and chains.is_file():
        results["chains"] = chains_run(chains, state=state, engines=engines)
        print(f"chains: {results['chains']}")
    results["total_seconds"] = round(time.perf_counter() - started, 1)
    results_write(results)
    print((RESULTS / f"{OUT}.md").read_text() if (RESULTS / f"{OUT}.md").exists() else "no results")


def results_write(results: dict[str, Any]) -> None:
    """bench/results/{OUT}.json and .md, and each question's answer in {OUT}-questions.json (kept out of the
    summary); the machine's load average is recorded beside the timings."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    results["load_average"] = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    rows = {
        f"{name} {engine}": m.get("rows", [])
        for name, d in results["datasets"].items()
        for engine, m in d["engines"].items()
    }
    summary = json.loads(json.dumps(results))
    for d in summary["datasets"].values():
        for m in d["engines"].values():
            m.pop("rows", None)
    (RESULTS / f"{OUT}.json").write_text(json.dumps(summary, indent=2) + "\n")
    (RESULTS / f"{OUT}-questions.json").write_text(json.dumps(rows, indent=1) + "\n")
    (RESULTS / f"{OUT}.md").write_text(markdown(summary))


def validation_load(folder: Path, *, limit: int | None) -> Any:
    """HippoRAG's train set of a dataset folder (hipporag_*_train_100.json; HotpotQA's original format or
    MuSiQue's), its own questions' passages only; None when the folder has none (2Wiki)."""
    from bench.retrieval import Dataset, _pool

    found = sorted(folder.glob("hipporag_*_train_100.json"))
    if not found:
        return None
    dataset = Dataset(name=folder.name)
    for q in json.loads(found[0].read_text())[:limit]:
        gold: set[str] = set()
        if "context" in q:  # HotpotQA
            wanted = {title for title, _ in q["supporting_facts"]}
            for title, sentences in q["context"]:
                key = _pool(dataset, title, " ".join(sentences))
                if title in wanted:
                    gold.add(key)
            dataset.questions.append((q["question"], gold))
            dataset.answers.append([str(q.get("answer", ""))])
        else:  # MuSiQue
            for p in q["paragraphs"]:
                key = _pool(dataset, p["title"], p["paragraph_text"])
                if p.get("is_supporting"):
                    gold.add(key)
            dataset.questions.append((q["question"], gold))
            dataset.answers.append([str(q.get("answer", "")), *(str(a) for a in q.get("answer_aliases", []))])
    return dataset


def _ask(*, user: Any, graph: Any, question: str, engine: str) -> dict[str, Any]:
    from exograph.chat.services import chat_message_prepare, chat_message_send

    plan = chat_message_prepare(actor=user, message=question, model="snap", engine=engine, graph_id=graph.id)
    return chat_message_send(actor=user, plan=plan)


def ask_off_topic(*, user: Any, graph: Any, questions: list[str], engine: str) -> dict[str, Any]:
    """Questions this graph does not hold: the share refused (answered false, not grounded)."""
    refused = [not _ask(user=user, graph=graph, question=q, engine=engine)["answered"] for q in questions]
    return {"questions": len(refused), "refused": round(100 * sum(refused) / max(1, len(refused)), 1)}


def chains_run(path: Path, *, state: Path | None, engines: tuple[str, ...]) -> dict[str, Any]:
    """Every chain's links and distractor in one graph; each question asked per engine: the share whose short
    answer is the far end with both link documents cited (and the far end alone, and both links alone)."""
    from bench.retrieval import Dataset, _pool, dataset_graph

    chains = json.loads(path.read_text())["chains"]
    dataset = Dataset(name="chains")
    for number, chain in enumerate(chains):
        links = [_pool(dataset, f"chain {number} link {i}", text) for i, text in enumerate(chain["links"])]
        _pool(dataset, f"chain {number} other", chain["distractor"])
        dataset.questions.append((chain["question"], set(links)))
        dataset.answers.append([chain["answer"]])
    user, graph, _, doc_to_keys, _ = dataset_graph(dataset, limit=None, state=state)
    out: dict[str, Any] = {"chains": len(chains)}
    for engine in engines:
        far = both = full = 0
        for (question, links), answers in zip(dataset.questions, dataset.answers, strict=True):
            reply = _ask(user=user, graph=graph, question=question, engine=engine)
            short = str(reply.get("short_answer") or "")
            got_far = exact_match(short, answers) == 1.0
            cited = {k for item in reply["evidence"] for k in doc_to_keys.get(str(item.get("document_id")), ())}
            got_both = links <= cited
            far += got_far
            both += got_both
            full += got_far and got_both
        n = max(1, len(chains))
        out[engine] = {
            "far_end": round(100 * far / n, 1),
            "both_links_cited": round(100 * both / n, 1),
            "far_end_and_both_links": round(100 * full / n, 1),
        }
    return out


def ask_all(*, user: Any, graph: Any, dataset: Any, doc_to_keys: dict[str, set[str]], engine: str) -> dict[str, Any]:
    """Every question of dataset as one chat message (a new session each) with engine; the summary."""
    from exograph.chat.evidence import evidence_retrieve
    from exograph.chat.models import ChatMessage
    from exograph.chat.services import chat_message_prepare, chat_message_send
    from exograph.core.scope import Scope

    answered: list[float] = []
    rows: list[dict[str, Any]] = []  # per question (written to {OUT}-questions.json)
    support_right: list[float] = []
    support_wrong: list[float] = []

    r5: list[float] = []
    r10: list[float] = []
    em: list[float] = []
    f1: list[float] = []
    support: list[float] = []
    totals: list[float] = []
    retrievals: list[float] = []
    for (question, gold), answers in zip(dataset.questions, dataset.answers, strict=True):
        t0 = time.perf_counter()
        plan = chat_message_prepare(actor=user, message=question, model="snap", engine=engine, graph_id=graph.id)
        reply = chat_message_send(actor=user, plan=plan)
        totals.append((time.perf_counter() - t0) * 1000)
        t1 = time.perf_counter()
        evidence_retrieve(actor=user, question=plan.message, engine=engine, scope=Scope.PRIVATE, graph_id=graph.id)
        retrievals.append((time.perf_counter() - t1) * 1000)
        handed = ChatMessage.objects.get(pk=reply["message_id"]).evidence or []
        ranked: list[str] = []
        for item in handed:
            if item.get("kind") == "passage" and item.get("document_id"):
                ranked.extend(sorted(doc_to_keys.get(str(item["document_id"]), ())))
        ranked = list(dict.fromkeys(ranked))
        r5.append(recall_at_k(gold, ranked, 5))
        r10.append(recall_at_k(gold, ranked, 10))
        text = str(reply.get("short_answer") or "") or answer_text(str(reply["answer"]))
        em.append(exact_match(text, answers))
        f1.append(f1_score(text, answers))
        support.append(float(reply["support_score"] or 0.0))
        answered.append(1.0 if reply.get("answered", True) else 0.0)
        (support_right if f1[-1] >= 0.5 else support_wrong).append(support[-1])
        rows.append(
            {
                "question": question,
                "gold": answers[0] if answers else "",
                "short_answer": str(reply.get("short_answer") or ""),
                "f1": round(f1[-1], 3),
                "answered": bool(reply.get("answered", True)),
                "support": support[-1],
                "ms": round(totals[-1], 1),
            }
        )
    n = max(1, len(totals))
    median_total = statistics.median(totals) if totals else 0.0
    median_retrieval = statistics.median(retrievals) if retrievals else 0.0
    return {
        "questions": len(totals),
        "evidence_r5": round(100 * sum(r5) / n, 1),
        "evidence_r10": round(100 * sum(r10) / n, 1),
        "em": round(100 * sum(em) / n, 1),
        "f1": round(100 * sum(f1) / n, 1),
        "support": round(sum(support) / n, 3),
        "answered": round(100 * sum(answered) / n, 1),
        "support_right": round(statistics.mean(support_right), 3) if support_right else None,
        "support_wrong": round(statistics.mean(support_wrong), 3) if support_wrong else None,
        # The support score's quartiles (25th, 50th, 75th) for right (F1 >= 0.5) and wrong answers: its calibration.
        "support_right_quartiles": quartiles(support_right),
        "support_wrong_quartiles": quartiles(support_wrong),
        "support_auc": support_auc(support_right, support_wrong),
        "median_ms": round(median_total, 1),
        "median_retrieval_ms": round(median_retrieval, 1),
        "retrieval_share": round(median_retrieval / median_total, 2) if median_total else 0.0,
        "rows": rows,
    }


def support_auc(right: Sequence[float], wrong: Sequence[float]) -> float | None:
    """The chance that a right answer's support score is above a wrong one's (ties count half): 1.0 when the score
    ranks every right answer first, 0.5 when it does not separate them; None without both."""
    if not right or not wrong:
        return None
    above = sum((r > w) + 0.5 * (r == w) for r in right for w in wrong)
    return round(above / (len(right) * len(wrong)), 3)


def quartiles(values: list[float]) -> list[float] | None:
    """The 25th, 50th and 75th percentiles of values (None when there are fewer than two)."""
    if len(values) < 2:
        return None
    return [round(q, 3) for q in statistics.quantiles(values, n=4, method="inclusive")]


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "# Chat benchmark (make bench-chat)",
        "",
        f"Model snap, provider {results['provider']}; "
        + ("validation (HippoRAG train) questions" if results.get("split") == "validation" else "development questions")
        + (f" (first {results['limit']} per dataset)." if results.get("limit") else "."),
        f"Total run time {results.get('total_seconds', 0)} s on {results['machine']}; load average at the end "
        f"{' '.join(results.get('load_average', [])) or 'unknown'}.",
        "",
        "| dataset | engine | questions | evidence R@5 | evidence R@10 | EM | F1 | answered % | support "
        "(right / wrong) | median ms | retrieval ms (share) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, d in results["datasets"].items():
        for engine, m in d["engines"].items():
            lines.append(
                f"| {name} | {engine} | {m['questions']} | {m['evidence_r5']} | {m['evidence_r10']} | {m['em']} "
                f"| {m['f1']} | {m.get('answered', '')} | {m['support']} ({m.get('support_right')} / "
                f"{m.get('support_wrong')}; quartiles {m.get('support_right_quartiles')} / "
                f"{m.get('support_wrong_quartiles')}; AUC {m.get('support_auc')}) | {m['median_ms']} | {m['median_retrieval_ms']} "
                f"({round(100 * m['retrieval_share'])}%) |"
            )
    lines.append("")
    if results.get("abstention"):
        lines += ["Abstention (questions of one dataset asked against another's graph; % refused):", ""]
        lines += ["| questions on graph | engine | questions | refused % |", "|---|---|---:|---:|"]
        for pair, by_engine in results["abstention"].items():
            for engine, m in by_engine.items():
                lines.append(f"| {pair} | {engine} | {m['questions']} | {m['refused']} |")
        lines.append("")
    if results.get("chains"):
        c = results["chains"]
        lines += [f"Chains ({c['chains']} two-link chains, paraphrased questions, one distractor each):", ""]
        lines += ["| engine | far end % | both links cited % | far end and both links % |", "|---|---:|---:|---:|"]
        for engine in (e for e in c if e != "chains"):
            m = c[engine]
            lines.append(f"| {engine} | {m['far_end']} | {m['both_links_cited']} | {m['far_end_and_both_links']} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
