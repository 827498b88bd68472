"""Gold 2Wiki bridge entities found as nodes, over the full 6,119-passage corpus, in minutes instead of hours.

A gold bridge name (subject or object of a dev question's `evidences` triple, normalised) is a node when some
passage's extraction has it (the ingest's document_extract plus the title entity, as the index stage writes them).
Only a passage whose normalised text holds the name (or whose title is the name) can yield it, so only those are
extracted, until one yields it, at most CAP of them per name (a name that 25 passages holding it do not yield is
counted missed: a slight undercount against bench/extraction.py, which extracts every passage). Prints the share
as names and as names or aliases, and the names missed.

    .venv/bin/python bench/extraction_bridge.py [--data DIR] [--cap 25]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.retrieval import DEFAULT_DATA  # noqa: E402


@dataclass(frozen=True)
class Chunk:
    id: str
    text: str


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cap", type=int, default=25)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
    os.environ.setdefault("EXOGRAPH_VAR_DIR", tempfile.mkdtemp(prefix="exo-bench-bridge-"))
    import django

    django.setup()
    from exograph.documents.extraction import document_extract
    from exograph.documents.services.stages import _title_entity_add
    from exograph.graphs.types import normalize_name

    folder = args.data / "2wikimultihopqa"
    corpus = json.loads(next(folder.glob("*_corpus.json")).read_text())
    questions = json.loads(next(folder.glob("2wiki_dev_*.json")).read_text())
    bridge = [normalize_name(str(t[i])) for q in questions for t in q["evidences"] if len(t) == 3 for i in (0, 2)]
    bridge = [b for b in bridge if b]
    texts = [normalize_name(row["text"]) for row in corpus]
    titles = {normalize_name(row["title"]): n for n, row in enumerate(corpus)}
    cache: dict[int, tuple[set[str], set[str]]] = {}

    def extracted(n: int) -> tuple[set[str], set[str]]:
        if n not in cache:
            extraction = document_extract([Chunk(id=f"p{n}:0", text=corpus[n]["text"])])
            _title_entity_add(extraction, title=corpus[n]["title"], chunk_ids=[f"p{n}:0"])
            names = {normalize_name(e.name) for e in extraction.entities}
            names |= {normalize_name(m.name) for m in extraction.mentions}
            cache[n] = (names, {normalize_name(a) for e in extraction.entities for a in e.aliases})
        return cache[n]

    t0 = time.perf_counter()
    as_name: dict[str, bool] = {}
    as_alias: dict[str, bool] = {}
    for name in dict.fromkeys(bridge):
        holders = ([titles[name]] if name in titles else []) + [n for n, t in enumerate(texts) if name in t][: args.cap]
        as_name[name] = as_alias[name] = False
        for n in holders:
            names, aliases = extracted(n)
            as_name[name] = as_name[name] or name in names
            as_alias[name] = as_alias[name] or name in names or name in aliases
            if as_name[name]:
                break
    found = sum(as_name[b] for b in bridge)
    found_alias = sum(as_alias[b] for b in bridge)
    print(
        f"bridge entities {len(bridge)}; as names {found} ({100 * found / len(bridge):.1f} %); as names or aliases "
        f"{found_alias} ({100 * found_alias / len(bridge):.1f} %); passages extracted {len(cache)}; "
        f"{time.perf_counter() - t0:.0f} s"
    )
    missed = collections.Counter(b for b in bridge if not as_alias[b])
    print("missed: " + ", ".join(f"{name} ({n})" for name, n in missed.most_common()))


if __name__ == "__main__":
    main()
