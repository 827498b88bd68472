"""Offline extraction quality on the 2Wiki corpus (part of `make bench-retrieval`'s report; pure Python, no store).

For every passage of the 2Wiki corpus (each passage one document, as the retrieval benchmark ingests it) the
ingest's own extraction runs (documents.extraction.document_extract: the configured extractor, resolve,
prune) and the passage's title becomes an entity (stages._title_entity_add), exactly as the index stage
writes them. Reported:

  * entities per passage (mean and median) and relations per passage;
  * bridge coverage: of the entities named in the gold `evidences` triples (subject and object) of the
    2Wiki development questions, the share that is a node of the graph (an extracted or title entity with
    the same normalised name, graphs.types.normalize_name, as entity linking looks them up), also counting an
    entity's aliases (a disambiguated title's bare name, an acronym), and the names missed;
  * bridge links: of the gold triples (subject, relation, object) whose subject titles a passage, the share
    where that passage is tied to the object's name, as graph mode walks it: by extraction's mentions alone,
    and with the names the passage writes (graphs.retrieval.name_spans, linked to the names that are nodes).

    .venv/bin/python bench/extraction.py [--data DIR] [--limit N]

Results: bench/results/extraction.json and extraction.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.retrieval import DEFAULT_DATA, RESULTS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None, help="only the first N corpus passages")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
    os.environ.setdefault("EXOGRAPH_VAR_DIR", tempfile.mkdtemp(prefix="exo-bench-extraction-"))
    import django

    django.setup()
    result = measure(args.data / "2wikimultihopqa", limit=args.limit)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "extraction.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "extraction.md").write_text(markdown(result))
    print(markdown(result))


def measure(folder: Path, *, limit: int | None) -> dict[str, Any]:
    from dataclasses import dataclass

    from django.conf import settings

    from exograph.documents.extraction import document_extract
    from exograph.documents.services.stages import _title_entity_add
    from exograph.graphs.types import normalize_name

    @dataclass(frozen=True)
    class Chunk:
        id: str
        text: str

    corpus = json.loads(next(folder.glob("*_corpus.json")).read_text())[:limit]
    questions = json.loads(next(folder.glob("2wiki_dev_*.json")).read_text())
    from exograph.graphs.retrieval import name_spans

    nodes: set[str] = set()
    aliases: set[str] = set()  # entity linking also finds an entity by an alias (store_alias_names)
    mentioned: dict[str, set[str]] = {}  # normalised passage title -> names its passages mention
    written: dict[str, set[str]] = {}  # normalised passage title -> names its passages write
    per_passage: list[int] = []
    relations: list[int] = []
    typed = total_entities = 0
    t0 = time.perf_counter()
    for n, row in enumerate(corpus):
        extraction = document_extract([Chunk(id=f"p{n}:0", text=row["text"])])
        _title_entity_add(extraction, title=row["title"], chunk_ids=[f"p{n}:0"])
        names = {normalize_name(e.name) for e in extraction.entities} | {
            normalize_name(m.name) for m in extraction.mentions
        }
        names.discard("")
        nodes |= names
        aliases.update(normalize_name(a) for e in extraction.entities for a in e.aliases)
        total_entities += len(extraction.entities)
        typed += sum(1 for e in extraction.entities if e.type != "CONCEPT")
        title = normalize_name(row["title"])
        mentioned.setdefault(title, set()).update(normalize_name(m.name) for m in extraction.mentions)
        written.setdefault(title, set()).update(name_spans(row["text"]))
        per_passage.append(len(names))
        relations.append(len(extraction.relations))
    seconds = time.perf_counter() - t0
    bridge: list[str] = []
    for q in questions:
        for triple in q.get("evidences", []):
            if len(triple) == 3:
                bridge.append(normalize_name(str(triple[0])))
                bridge.append(normalize_name(str(triple[2])))
    bridge = [b for b in bridge if b]
    found = sum(1 for b in bridge if b in nodes)
    found_or_alias = sum(1 for b in bridge if b in nodes or b in aliases)
    missed: dict[str, int] = {}
    for b in bridge:
        if b not in nodes and b not in aliases:
            missed[b] = missed.get(b, 0) + 1
    links = [
        (normalize_name(str(t[0])), normalize_name(str(t[2])))
        for q in questions
        for t in q.get("evidences", [])
        if len(t) == 3 and normalize_name(str(t[0])) in mentioned
    ]
    by_mention = sum(1 for s, o in links if o in nodes and o in mentioned[s])
    by_name = sum(1 for s, o in links if o in nodes and (o in mentioned[s] or o in written[s]))
    return {
        "extractor": settings.DOCUMENTS_EXTRACTOR,
        "passages": len(corpus),
        "entities_per_passage_mean": round(statistics.mean(per_passage), 2) if per_passage else 0.0,
        "entities_per_passage_median": statistics.median(per_passage) if per_passage else 0,
        "relations_per_passage_mean": round(statistics.mean(relations), 2) if relations else 0.0,
        "distinct_nodes": len(nodes),
        "typed_share": round(100 * typed / max(1, total_entities), 1),
        "bridge_entities": len(bridge),
        "bridge_found": found,
        "bridge_coverage": round(100 * found / max(1, len(bridge)), 1),
        "bridge_coverage_with_aliases": round(100 * found_or_alias / max(1, len(bridge)), 1),
        "bridge_missed": dict(sorted(missed.items(), key=lambda kv: (-kv[1], kv[0]))),
        "bridge_links": len(links),
        "bridge_links_by_mention": round(100 * by_mention / max(1, len(links)), 1),
        "bridge_links_with_written_names": round(100 * by_name / max(1, len(links)), 1),
        "extraction_seconds": round(seconds, 1),
    }


def markdown(r: dict[str, Any]) -> str:
    return "\n".join(
        [
            "# Offline extraction on the 2Wiki corpus",
            "",
            f"Extractor `{r['extractor']}` over {r['passages']} passages in {r['extraction_seconds']} s.",
            "",
            "| entities / passage (mean, median) | relations / passage | distinct nodes | typed (not CONCEPT) "
            "| gold bridge entities found as nodes |",
            "|---:|---:|---:|---:|---:|",
            f"| {r['entities_per_passage_mean']}, {r['entities_per_passage_median']} | "
            f"{r['relations_per_passage_mean']} | {r['distinct_nodes']} | {r.get('typed_share', '–')}% | "
            f"{r['bridge_coverage']}% ({r['bridge_found']} of {r['bridge_entities']}) |",
            "",
            f"With an entity's aliases (entity linking finds an entity by them too): "
            f"{r.get('bridge_coverage_with_aliases', '–')}%. Missed, most frequent first: "
            + ", ".join(f"{name} ({n})" for name, n in list(r.get("bridge_missed", {}).items())[:20]),
            "",
            f"Gold links (subject passage tied to the object's name) over {r['bridge_links']} triples: "
            f"{r['bridge_links_by_mention']}% by extraction's mentions alone, "
            f"{r['bridge_links_with_written_names']}% with the names the passage writes (graph mode).",
            "",
        ]
    )


if __name__ == "__main__":
    main()
