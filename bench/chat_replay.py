"""Replay the chat reader on saved evidence: every answer benchmark's reader figures in about a minute.

Retrieval is most of a chat bench's time and a reader change does not touch it. `dump` runs the real benches'
retrieval once (graph engine, embedded default, bench/chat_replay_dump.py) and saves per question what the offline
reader receives (the asked text and the numbered statements generation hands it, with their document titles),
the gold answers, and the live answer. `replay` calls the reader only, as exograph/chat/generation.py calls it
(the same `extract_answer`, MiniLM similarity and offline NER through generation's own `_similarity` and
`_entity_types`, caches emptied at each set as a live run starts fresh), scores it with bench/chat.py's and
bench/chat_articles.py's own scoring, and reports per set how many answers differ from the dump's live ones
(0 on the dump's commit). `diff` lists the questions whose answer changed between two replays.

    nice -n 19 .venv/bin/python bench/chat_replay.py dump [--out /tmp/replay/dump.json] [--sets a,b] [--limit N]
    .venv/bin/python bench/chat_replay.py replay /tmp/replay/dump.json [--out /tmp/replay/after.json] [--sets a,b]
    .venv/bin/python bench/chat_replay.py diff /tmp/replay/base.json /tmp/replay/after.json [--sets a,b]

Sets: hotpotqa-dev (100), hotpotqa-validation (40), and one per bench/data file: articles, articles-heldout,
chains, chains-heldout, notes, notes-heldout, notes-heldout2 (bench/chat_replay_dump.py says what each asks).
Per set: EM and F1 of the answerable questions (the short answer, else the answer text without citations, as the
benches score), holds (chat_articles: the answer holds a gold), refused % of the answerable, of the off-topic and
of the near-topic questions (HotpotQA's off-topic are bench/chat.py's abstention questions), and for chains the
far end (short answer EM) and both links cited. `dump --limit N` takes HotpotQA's first N questions instead,
corpus and all, as bench/chat.py --limit N; --data DIR is the eval data (default ../shared/eval).

Dump again when retrieval, ingest or the data change: the replayed figures are the live benches' only while
retrieval is as dumped. The dump and the replays stay out of the repository (default under /tmp).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.chat import answer_text, exact_match, f1_score  # noqa: E402
from bench.chat_articles import holds  # noqa: E402

DEFAULT_DUMP = Path(tempfile.gettempdir()) / "replay" / "dump.json"
DEFAULT_DATA = ROOT.parent / "shared" / "eval"


def _django() -> None:
    """Settings as a bench run has them (bench.common.start_services), without services: the reader needs none."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
    os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "0")
    os.environ.setdefault("DJANGO_STATIC_MANIFEST", "0")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    var = tempfile.mkdtemp(prefix="exo-bench-replay-")
    atexit.register(shutil.rmtree, var, ignore_errors=True)
    os.environ["EXOGRAPH_VAR_DIR"] = var
    os.environ["EXOGRAPH_LOG_LEVEL"] = "warning"
    os.environ.pop("DATABASE_URL", None)
    import django

    django.setup()


def replay(dump_path: Path, *, out: Path | None, sets: list[str] | None) -> dict[str, Any]:
    _django()
    from django.conf import settings

    from exograph.chat import generation
    from exograph.chat.citations import citations_check
    from exograph.core.llm.extractive import Statement, extract_answer

    if settings.CHAT_PROVIDER != "extractive":
        raise SystemExit(f"CHAT_PROVIDER is {settings.CHAT_PROVIDER!r}: generation would not call the offline reader")
    dumped = json.loads(dump_path.read_text())
    items = [item for item in dumped["items"] if sets is None or item["set"] in sets]
    started = time.perf_counter()
    answers: list[dict[str, Any]] = []
    current = None
    for item in items:
        if item["set"] != current:  # a live bench run starts with empty reader caches
            current = item["set"]
            generation._sentence_vectors.clear()
            generation._sentence_types.clear()
        statements = [Statement(**{k: v for k, v in s.items() if k != "keys"}) for s in item["statements"]]
        extracted = extract_answer(
            question=item["asked"],
            statements=statements,
            similarity=generation._similarity() if item["similarity"] else None,
            entity_types=generation._entity_types() if item["entity_types"] else None,
        )
        check = citations_check(answer=extracted.text, evidence={s.n: s.text for s in statements})
        keys = {s["n"]: s.get("keys", []) for s in item["statements"]}
        answers.append(
            {
                "set": item["set"],
                "kind": item["kind"],
                "question": item["question"],
                "golds": item["golds"],
                "links": item.get("links", []),
                "short": extracted.short,
                "text": answer_text(check.answer),
                "answered": bool(extracted.answered),
                "cited_keys": sorted({k for n in check.cited for k in keys.get(n, ())}),
                "live": item.get("live"),
            }
        )
    seconds = round(time.perf_counter() - started, 1)
    summary = summarise(answers)
    print(table(summary, seconds=seconds, commit=dumped["meta"].get("commit", "")))
    if dumped["meta"].get("uncommitted_changes"):
        print("note: the dump was made with uncommitted changes under exograph/ (its live answers may mix versions)")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        saved = {"dump": str(dump_path), "dump_meta": dumped["meta"], "seconds": seconds, "summary": summary}
        out.write_text(json.dumps({**saved, "answers": answers}, indent=1) + "\n")
        print(f"answers written to {out}")
    return summary


def scored(answer: dict[str, Any]) -> str:
    """The text the benches score: the short answer when there is one, else the answer without citations."""
    return str(answer["short"] or answer["text"])


def outcome(answer: dict[str, Any]) -> str:
    """right / partial / wrong / refused for an answerable question; refused / answered for one the documents
    do not answer (refused is right there)."""
    if answer["kind"] in ("off_topic", "near_topic"):
        return "answered" if answer["answered"] else "refused"
    if not answer["answered"]:
        return "refused"
    if exact_match(scored(answer), answer["golds"]):
        return "right"
    return "partial" if f1_score(scored(answer), answer["golds"]) > 0 else "wrong"


def _same(answer: dict[str, Any], other: dict[str, Any] | None) -> bool:
    return other is not None and all(answer[k] == other[k] for k in ("short", "text", "answered"))


def summarise(answers: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per set: the benches' figures (bench/chat.py ask_all, chains_run, ask_off_topic; bench/chat_articles.py)."""
    summary: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(a["set"] for a in answers):
        rows = [a for a in answers if a["set"] == name]
        asked = [a for a in rows if a["kind"] in ("answerable", "chain")]
        n = max(1, len(asked))
        figures: dict[str, Any] = {
            "questions": len(asked),
            "em": round(100 * sum(exact_match(scored(a), a["golds"]) for a in asked) / n, 1),
            "f1": round(100 * sum(f1_score(scored(a), a["golds"]) for a in asked) / n, 1),
            "holds": round(100 * sum(holds(f"{a['short']} {a['text']}", a["golds"]) for a in asked) / n, 1),
            "refused": round(100 * sum(not a["answered"] for a in asked) / n, 1),
        }
        for kind in ("near_topic", "off_topic"):
            other = [a for a in rows if a["kind"] == kind]
            figures[kind] = len(other)
            figures[f"{kind}_refused"] = (
                round(100 * sum(not a["answered"] for a in other) / len(other), 1) if other else None
            )
        chains = [a for a in rows if a["kind"] == "chain"]
        if chains:
            far = [exact_match(a["short"], a["golds"]) == 1.0 for a in chains]
            both = [set(a["links"]) <= set(a["cited_keys"]) for a in chains]
            figures["far_end"] = round(100 * sum(far) / len(chains), 1)
            figures["both_links_cited"] = round(100 * sum(both) / len(chains), 1)
            figures["far_end_and_both_links"] = round(
                100 * sum(f and b for f, b in zip(far, both, strict=True)) / len(chains), 1
            )
        figures["differ_from_dump"] = sum(not _same(a, a.get("live")) for a in rows if a.get("live") is not None)
        summary[name] = figures
    return summary


def table(summary: dict[str, dict[str, Any]], *, seconds: float, commit: str) -> str:
    def cell(value: Any) -> str:
        return "-" if value is None else str(value)

    lines = [
        f"Reader replay ({seconds} s; dump of {commit[:7] or 'unknown commit'})",
        "",
        "| set | questions | EM | F1 | holds % | refused % | near-topic refused % (n) | off-topic refused % (n) "
        "| chains far end / both links / both % | answers unlike the dump's live ones |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in summary.items():
        chains = f"{m['far_end']} / {m['both_links_cited']} / {m['far_end_and_both_links']}" if "far_end" in m else "-"
        lines.append(
            f"| {name} | {m['questions']} | {m['em']} | {m['f1']} | {m['holds']} | {m['refused']} "
            f"| {cell(m['near_topic_refused'])} ({m['near_topic']}) | {cell(m['off_topic_refused'])} ({m['off_topic']}) "
            f"| {chains} | {m['differ_from_dump']} |"
        )
    return "\n".join(lines) + "\n"


def _keyed(answers: list[dict[str, Any]]) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    """Answers by (set, kind, question, occurrence): a question asked twice in a set is told apart by its turn."""
    seen: Counter[tuple[str, str, str]] = Counter()
    out: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for a in answers:
        base = (a["set"], a["kind"], a["question"])
        out[(*base, seen[base])] = a
        seen[base] += 1
    return out


def _said(answer: dict[str, Any]) -> str:
    return scored(answer) if answer["answered"] else f"(refused) {scored(answer)[:80]}"


def diff(before_path: Path, after_path: Path, *, sets: list[str] | None) -> int:
    """Print every question whose answer changed (set, kind, question, gold, before -> after, outcome change) and
    the count of changes to right and to wrong; returns the number changed."""
    before = _keyed(json.loads(before_path.read_text())["answers"])
    after = _keyed(json.loads(after_path.read_text())["answers"])
    changed = Counter[str]()
    for key in sorted(set(before) & set(after), key=lambda k: (k[0], k[1], k[2], k[3])):
        if sets is not None and key[0] not in sets:
            continue
        b, a = before[key], after[key]
        if _same(a, b):
            continue
        was, now = outcome(b), outcome(a)
        if key[1] in ("off_topic", "near_topic"):
            order = {"answered": 0, "refused": 2}
        else:
            order = {"wrong": 0, "refused": 1, "partial": 1, "right": 2}
        verdict = "better" if order[now] > order[was] else "worse" if order[now] < order[was] else "same outcome"
        changed[verdict] += 1
        gold = " | ".join(b["golds"][:3]) or "(must refuse)"
        print(f"[{key[0]} {key[1]}] {key[2]}\n    gold: {gold}\n    {_said(b)!r} -> {_said(a)!r}")
        print(f"    {was} -> {now} ({verdict})")
    missing = len(set(before) ^ set(after))
    print(
        f"\n{sum(changed.values())} answers changed: {changed['better']} better, {changed['worse']} worse, "
        f"{changed['same outcome']} same outcome" + (f"; {missing} questions in one file only" if missing else "")
    )
    return sum(changed.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    dumping = commands.add_parser("dump", help="run the benches' retrieval once and save what the reader receives")
    dumping.add_argument("--out", type=Path, default=DEFAULT_DUMP)
    dumping.add_argument("--sets", default=None, help="comma-separated set names; default all")
    dumping.add_argument("--data", type=Path, default=DEFAULT_DATA)
    dumping.add_argument(
        "--limit", type=int, default=None, help="HotpotQA questions per split (default 100 dev, 40 validation)"
    )
    one = commands.add_parser("_dump_set")  # one set in a process of its own (dump runs it)
    one.add_argument("name")
    one.add_argument("part", type=Path)
    one.add_argument("--data", type=Path, default=DEFAULT_DATA)
    one.add_argument("--limit", type=int, default=None)
    replaying = commands.add_parser("replay", help="the reader alone on a dump; figures per set")
    replaying.add_argument("dump", type=Path)
    replaying.add_argument("--out", type=Path, default=None, help="write every answer here (for diff)")
    replaying.add_argument("--sets", default=None)
    differ = commands.add_parser("diff", help="questions whose answer changed between two replays")
    differ.add_argument("before", type=Path)
    differ.add_argument("after", type=Path)
    differ.add_argument("--sets", default=None)
    args = parser.parse_args()
    chosen = [s for s in args.sets.split(",") if s] if getattr(args, "sets", None) else None
    if args.command == "dump":
        from bench.chat_replay_dump import SETS, dump

        unknown = set(chosen or ()) - set(SETS)
        if unknown:
            raise SystemExit(f"unknown sets {sorted(unknown)}; known: {', '.join(SETS)}")
        dump(args.out, sets=chosen or list(SETS), data=args.data, limit=args.limit)
    elif args.command == "_dump_set":
        from bench.chat_replay_dump import _dump_set

        _dump_set(args.name, args.part, data=args.data, limit=args.limit)
    elif args.command == "replay":
        replay(args.dump, out=args.out, sets=chosen)
    else:
        diff(args.before, args.after, sets=chosen)


if __name__ == "__main__":
    main()
