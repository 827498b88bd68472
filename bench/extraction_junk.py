"""Junk entities of the configured extractor (issue 25): on the PDF/DOCX fixtures and a 2Wiki corpus sample.

Each fixture file that opens (../shared/fixtures/files; encrypted, corrupt and image-only files skipped) is parsed
(documents.parsing, the sandbox) and chunked as an upload is, then extracted as one document
(documents.extraction.document_extract); each of the first --passages 2Wiki corpus passages is one document. Every
resulting entity name is judged by the rule below (written independently of the extractor's filter) and
the share that is junk is reported with examples, with the typed share (not CONCEPT) and entities per document.

Junk rule: code = one or two letters and digits ("T16") seen once in its document; caps = 2-5 capitals seen once
in a document of several passages; fragment = a name mixing lowercase words (other than name connectors
between its capitalised words: of, on, for, and, at, de, von...) with capitalised ones ("film stars Audrey",
"Hepburn as Eliza"), or whose lowercase first or last word is a stopword (YAKE's English list), a particle or an -ing/-ed form ("beating X"); lowercase = an all-lowercase phrase holding
a stopword or particle ("trees back").

    .venv/bin/python bench/extraction_junk.py [--fixtures DIR] [--data DIR] [--passages N] [--out NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.retrieval import DEFAULT_DATA, RESULTS  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures" / "files"
_SKIP = ("oc_", "scan-bad", "password", "aes-256", "invalid", "bug1250079", "simple1", "truncated", "clusterfuzz")
# Lowercase words a capitalised name holds between its capitalised words ("Bank of England", "International
# Conference on Computational Linguistics", "Frankfurt an der Oder"); first or last they are still fragments.
_CONNECT = {
    "of", "on", "for", "and", "at", "upon", "de", "del", "der", "des", "van", "von", "zu", "an", "la", "le", "du",
    "the", "&", "y", "da", "di", "do", "dos", "das",
}  # fmt: skip
_PARTICLES = {"back", "up", "down", "out", "off", "away", "over", "again", "forward", "together", "apart"}


def _stopwords() -> set[str]:
    import yake

    return set((Path(yake.__file__).parent / "core" / "StopwordsList" / "stopwords_en.txt").read_text().split())


def junk_reason(name: str, text: str, passages: int, stop: set[str]) -> str:
    """'' for a name the rule accepts, else code / caps / fragment / lowercase (see the module docstring)."""
    words = name.split()
    if re.fullmatch(r"[A-Za-z]{1,2}\d+[A-Za-z]?", name):
        return "code" if len(re.findall(rf"\b{re.escape(name)}\b", text)) < 2 else ""
    if re.fullmatch(r"[A-Z]{2,5}", name):
        return "caps" if passages > 1 and len(re.findall(rf"\b{re.escape(name)}\b", text)) < 2 else ""
    if len(words) < 2:
        return ""
    lower = [w for w in words if w[:1].islower() and w.lower() not in _CONNECT]
    if lower and any(w[:1].isupper() for w in words):
        return "fragment"
    for word in (words[0], words[-1]):
        bare = word.strip(".,;:")
        if word.islower() and (bare in stop or bare in _PARTICLES or re.fullmatch(r"[a-z]{3,}(ing|ed)", bare)):
            return "fragment"
    if all(w.islower() for w in words) and any(w in stop or w in _PARTICLES for w in words):
        return "lowercase"
    return ""


def fixture_documents(folder: Path) -> list[tuple[str, list[str]]]:
    from django.conf import settings

    from exograph.documents.chunking import chunk_blocks
    from exograph.documents.models import DocumentType
    from exograph.documents.parsing import document_inspect, document_text_extract

    documents = []
    for path in sorted(folder.glob("*/*")):
        if path.suffix not in (".pdf", ".docx") or any(s in path.name for s in _SKIP) or "GeoTopo" in path.name:
            continue
        kind = DocumentType.PDF if path.suffix == ".pdf" else DocumentType.DOCX
        try:
            data = path.read_bytes()
            pages = document_inspect(data=data, content_type=kind).pages or 1
            blocks = document_text_extract(data=data, content_type=kind, pages=pages).blocks
        except Exception:  # noqa: BLE001, S112 - a file the product refuses has no entities to judge
            continue
        chunks = chunk_blocks(
            document_id="d",
            blocks=blocks,
            max_tokens=settings.DOCUMENTS_CHUNK_TOKENS,
            overlap_tokens=settings.DOCUMENTS_CHUNK_OVERLAP,
        )
        if chunks:
            documents.append((path.name, [c.text for c in chunks]))
    return documents


def measure(documents: list[tuple[str, list[str]]]) -> dict[str, Any]:
    from dataclasses import dataclass

    from exograph.documents.extraction import document_extract

    @dataclass(frozen=True)
    class Chunk:
        id: str
        text: str

    stop = _stopwords()
    total = typed = 0
    reasons: dict[str, int] = {}
    per_document: dict[str, str] = {}
    examples: dict[str, list[str]] = {}
    t0 = time.perf_counter()
    for name, texts in documents:
        extraction = document_extract([Chunk(f"{name}:{i}", t) for i, t in enumerate(texts)])
        whole = "\n".join(texts)
        junk_here = 0
        for entity in extraction.entities:
            total += 1
            typed += entity.type != "CONCEPT"
            if reason := junk_reason(entity.name, whole, len(texts), stop):
                reasons[reason] = reasons.get(reason, 0) + 1
                examples.setdefault(reason, []).append(entity.name)
                junk_here += 1
        if len(documents) <= 100:  # the fixtures, one by one (not the 2Wiki passages)
            per_document[name] = f"{junk_here}/{len(extraction.entities)}"
    junk = sum(reasons.values())
    return {
        "documents": len(documents),
        "entities": total,
        "entities_per_document": round(total / max(1, len(documents)), 2),
        "typed_share": round(100 * typed / max(1, total), 1),
        "junk": junk,
        "junk_rate": round(100 * junk / max(1, total), 1),
        "by_reason": reasons,
        "examples": {k: v[:12] for k, v in examples.items()},
        "seconds": round(time.perf_counter() - t0, 1),
        **({"by_document": per_document} if per_document else {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--passages", type=int, default=1500)
    parser.add_argument("--out", default="extraction-junk")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
    os.environ.setdefault("EXOGRAPH_VAR_DIR", tempfile.mkdtemp(prefix="exo-bench-junk-"))
    import django

    django.setup()
    corpus = json.loads((args.data / "2wikimultihopqa" / "hipporag_2wikimultihopqa_corpus.json").read_text())
    result = {
        "fixtures": measure(fixture_documents(args.fixtures)),
        "2wiki": measure([(f"p{n}", [row["text"]]) for n, row in enumerate(corpus[: args.passages])]),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
