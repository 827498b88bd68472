"""`bench/chat_replay.py dump`: the real benches' retrieval, once, and everything the offline reader receives.

Each set runs in a process of its own (`_dump_set`), as each live bench run does: fresh throwaway services
(bench.common.start_services, the embedded default), the set's corpus ingested by bench.retrieval.dataset_graph,
and every question sent through the chat service by bench.chat._ask (graph engine, model snap), in the order the
live bench asks them. The chat service runs unchanged; generation's `extract_answer` and `_statements` are wrapped
to record the reader's arguments (the asked text, the numbered statements with their document titles, whether a
similarity and the NER were given) and what the reply then said (the live answer, kept to check the replay).
Each set's process imports the code when it starts: dump from a checkout nobody edits meanwhile (e.g.
`git archive HEAD | tar -x -C DIR`, then run DIR/bench/chat_replay.py with this checkout's .venv and
`--data ../shared/eval` spelled out), or the live answers mix versions; meta.uncommitted_changes says whether
exograph/ differed from the commit when the dump ended.

Sets (name: source; what the live bench asks, in its order):

    hotpotqa-dev         bench/chat.py --datasets hotpotqa --limit 100 (then MuSiQue's first 10 asked of its graph,
                         the abstention pair "musique on hotpotqa" of a default run)
    hotpotqa-validation  bench/chat.py --split validation --limit 40 (then MuSiQue validation's first 10)
    chains, chains-heldout  bench/chat.py's chains_run (--chains bench/data/chains*.json; chains-heldout's
                         off_topic questions, which no bench asks, are asked after its chains)
    articles, articles-heldout, notes, notes-heldout, notes-heldout2 (any other bench/data/<name>.json with
                         articles)  bench/chat_articles.py --set bench/data/<name>.json
                         (questions, then off_topic, then near_topic)
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.chat import answer_text  # noqa: E402

DATA = ROOT / "bench" / "data"
HOTPOT = ("hotpotqa-dev", "hotpotqa-validation")
# every set: HotpotQA's two, then each bench/data file (articles*, chains*, notes*; a new file is a new set)
SETS = (*HOTPOT, *sorted(path.stem for path in DATA.glob("*.json")))
HOTPOT_LIMITS = {"hotpotqa-dev": 100, "hotpotqa-validation": 40}
ABSTAIN = 10  # bench/chat.py --abstain default: other-dataset questions asked of a graph


def dump(out: Path, *, sets: list[str], data: Path, limit: int | None = None) -> None:
    """Every set in a child process of its own (fresh services and caches, as a live run), merged into out.
    limit: HotpotQA's question limit instead of 100 and 40 (the corpus follows it, as bench/chat.py --limit)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    items: list[dict[str, Any]] = []
    started = time.perf_counter()
    for name in sets:
        part = out.with_name(f"{out.stem}.{name}.part.json")
        command = [
            sys.executable,
            str(Path(__file__).resolve().parent / "chat_replay.py"),
            "_dump_set",
            name,
            str(part),
        ]
        subprocess.run([*command, "--data", str(data), *(["--limit", str(limit)] if limit else [])], check=True)
        items.extend(json.loads(part.read_text())["items"])
        part.unlink()
        print(f"{name}: dumped ({time.perf_counter() - started:.0f} s so far)", flush=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "exograph"], capture_output=True, text=True
    ).stdout
    meta = {"commit": commit.strip(), "uncommitted_changes": bool(dirty.strip()), "sets": sets, "data": str(data)}
    meta["hotpotqa_limits"] = {name: limit or default for name, default in HOTPOT_LIMITS.items()}
    meta["seconds"] = round(time.perf_counter() - started, 1)
    out.write_text(json.dumps({"meta": meta, "items": items}, indent=1) + "\n")
    print(f"{len(items)} questions written to {out}")


class Recorder:
    """Wraps generation's extract_answer and _statements: the reader's arguments of the latest message."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.document_of: dict[int, str] = {}

    def install(self) -> None:
        from exograph.chat import generation

        real_extract, real_statements = generation.extract_answer, generation._statements

        def statements(items: list[dict[str, Any]]) -> Any:
            self.document_of = {int(item["n"]): str(item.get("document_id") or "") for item in items}
            return real_statements(items)

        def extract(**kwargs: Any) -> Any:
            extracted = real_extract(**kwargs)
            unknown = set(kwargs) - {"question", "statements", "similarity", "entity_types"}
            if unknown:
                raise SystemExit(f"generation now passes {sorted(unknown)} to the reader: teach bench/chat_replay.py")
            self.calls.append(
                {
                    "asked": kwargs["question"],
                    "statements": [dataclasses.asdict(s) for s in kwargs["statements"]],
                    "similarity": kwargs.get("similarity") is not None,
                    "entity_types": kwargs.get("entity_types") is not None,
                }
            )
            return extracted

        generation.extract_answer = extract
        generation._statements = statements


def _dump_set(name: str, part: Path, *, data: Path, limit: int | None = None) -> None:
    if limit:
        HOTPOT_LIMITS.update(dict.fromkeys(HOTPOT_LIMITS, limit))
    from bench.common import start_services

    server, _ = start_services(f"exo-bench-replay-{name}-", eager_tasks=True)
    try:
        import django

        django.setup()
        from django.conf import settings
        from django.core.management import call_command

        if settings.CHAT_PROVIDER != "extractive":
            raise SystemExit(f"CHAT_PROVIDER is {settings.CHAT_PROVIDER!r}: the replay reads the extractive reader")
        call_command("migrate", verbosity=0)
        recorder = Recorder()
        recorder.install()
        items = _ask_set(name, recorder=recorder, data=data)
        part.write_text(json.dumps({"items": items}) + "\n")
    finally:
        if server is not None:
            server.stop()


def _questions(name: str, data: Path) -> tuple[Any, list[tuple[str, str, list[str], list[str]]]]:
    """The set's corpus (a bench.retrieval Dataset) and its questions as (kind, question, golds, link keys), in
    the order the live bench asks them."""
    from bench.chat import validation_load
    from bench.retrieval import Dataset, _pool, dataset_load

    asked: list[tuple[str, str, list[str], list[str]]] = []
    if name in HOTPOT_LIMITS:
        limit = HOTPOT_LIMITS[name]
        load = validation_load if name.endswith("validation") else dataset_load
        dataset = load(data / "hotpotqa", limit=limit)
        other = load(data / "musique", limit=limit)
        if dataset is None or other is None:
            raise SystemExit(f"{name}: no HotpotQA or MuSiQue data under {data}")
        for (question, _), golds in zip(dataset.questions, dataset.answers, strict=True):
            asked.append(("answerable", question, golds, []))
        asked += [("off_topic", question, [], []) for question, _ in other.questions[:ABSTAIN]]
        return dataset, asked
    spec = json.loads((DATA / f"{name}.json").read_text())
    dataset = Dataset(name=name)
    if name.startswith("chains"):
        for number, chain in enumerate(spec["chains"]):  # as bench/chat.py chains_run pools them
            links = [_pool(dataset, f"chain {number} link {i}", text) for i, text in enumerate(chain["links"])]
            _pool(dataset, f"chain {number} other", chain["distractor"])
            asked.append(("chain", chain["question"], [chain["answer"]], links))
    else:
        for article in spec["articles"]:  # as bench/chat_articles.py pools them
            _pool(dataset, article["title"], article["text"])
        asked += [("answerable", item["question"], item["answers"], []) for item in spec["questions"]]
    asked += [("off_topic", question, [], []) for question in spec.get("off_topic", [])]
    asked += [("near_topic", question, [], []) for question in spec.get("near_topic", [])]
    return dataset, asked


def _ask_set(name: str, *, recorder: Recorder, data: Path) -> list[dict[str, Any]]:
    from bench.chat import _ask
    from bench.retrieval import dataset_graph

    dataset, asked = _questions(name, data)
    limit = HOTPOT_LIMITS.get(name)
    user, graph, _, doc_to_keys, _ = dataset_graph(dataset, limit=limit, state=None)
    items: list[dict[str, Any]] = []
    for kind, question, golds, links in asked:
        recorder.calls.clear()
        reply = _ask(user=user, graph=graph, question=question, engine="graph")
        if len(recorder.calls) != 1:
            raise SystemExit(f"{name}: {len(recorder.calls)} reader calls for {question!r} (expected 1)")
        call = recorder.calls[0]
        for statement in call["statements"]:
            statement["keys"] = sorted(doc_to_keys.get(recorder.document_of.get(statement["n"], ""), ()))
        cited = {k for item in reply["evidence"] for k in doc_to_keys.get(str(item.get("document_id")), ())}
        live = {
            "short": str(reply.get("short_answer") or ""),
            "text": answer_text(str(reply["answer"])),
            "answered": bool(reply.get("answered", True)),
            "cited_keys": sorted(cited),
        }
        items.append({"set": name, "kind": kind, "question": question, "golds": golds, "links": links, **call,
                      "live": live})  # fmt: skip
    print(f"{name}: {len(items)} questions asked", flush=True)
    return items
