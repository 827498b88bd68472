"""The offline extractor's CPU cost and a hash of everything it returns, on the inputs `make bench-ingest` ingests.

Inputs: the first --passages 2Wiki passages (one document each, read by the NER model a group of 64 at a time,
as the batch ingest does: documents.services.batch._extractions) and the chunks of every fixture PDF the parse
stage reads (shared/fixtures/files/pdf, one document each, as an upload's index stage extracts it). The chunks
are made as the pipeline makes them (parse stage: text_blocks or the sandboxed parse, chunk_blocks with the
embedder's token counter) once and kept in --inputs (a JSON file; the PDFs' parse, OCR included, is slow).

For each set it prints the CPU seconds of this process (time.process_time, all threads) spent in the NER model's
pass (ner_read_ahead) and in the rest of document_extract (keyphrases, rules, resolution, pruning), and the SHA-256
of every document's extraction_to_json in order: a refactor of the extractor must leave the hash unchanged.

    .venv/bin/python bench/extraction_speed.py [--set 2wiki|pdf|both] [--passages N] [--repeat N] [--profile FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import CORPUS_2WIKI, FIXTURES, PASSAGE_GROUP  # noqa: E402

DEFAULT_INPUTS = Path(tempfile.gettempdir()) / "exograph-extraction-speed-inputs.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=("pdf", "2wiki", "both"), default="both", dest="which")
    parser.add_argument("--passages", type=int, default=256, help="2Wiki passages (default 256, as bench-ingest)")
    parser.add_argument("--inputs", type=Path, default=DEFAULT_INPUTS, help="the chunks, made once and kept here")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the rules part over the same NER reading")
    parser.add_argument("--profile", type=Path, default=None, help="cProfile the rules part into this file")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exograph.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-secret-key-" + "x" * 40)
    os.environ.setdefault("EXOGRAPH_VAR_DIR", tempfile.mkdtemp(prefix="exo-bench-extraction-speed-"))
    import django

    django.setup()
    inputs = inputs_load(args.inputs, passages=args.passages)
    from exograph.documents.extraction.offline import OfflineExtractor

    OfflineExtractor.warm()
    sets = ("2wiki", "pdf") if args.which == "both" else (args.which,)
    for name in sets:
        documents = inputs[name]
        groups = (
            [documents[i : i + PASSAGE_GROUP] for i in range(0, len(documents), PASSAGE_GROUP)]
            if name == "2wiki"
            else [[document] for document in documents]
        )
        measure(name, groups, repeat=args.repeat, profile=args.profile)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def measure(name: str, groups: list[list[list[dict[str, str]]]], *, repeat: int, profile: Path | None) -> None:
    """NER CPU seconds, rules CPU seconds (each repeat), and the hash of every document's extraction."""
    from exograph.documents.extraction import document_extract, extraction_read_ahead, extraction_to_json
    from exograph.documents.extraction.types import ChunkLike

    chunked: list[list[list[ChunkLike]]] = [
        [[_Chunk(c["id"], c["text"]) for c in document] for document in group] for group in groups
    ]
    ner = 0.0
    rules: list[float] = []
    digest = ""
    count = 0
    for attempt in range(repeat):
        sha = hashlib.sha256()
        spent = 0.0
        count = 0
        profiler = cProfile.Profile() if profile and attempt == 0 else None
        for group in chunked:
            c0 = time.process_time()
            with extraction_read_ahead(group):
                c1 = time.process_time()
                if profiler:
                    profiler.enable()
                for chunks in group:
                    extraction = document_extract(chunks)
                    sha.update(json.dumps(extraction_to_json(extraction), sort_keys=True).encode())
                    count += 1
                if profiler:
                    profiler.disable()
                c2 = time.process_time()
            if attempt == 0:
                ner += c1 - c0
            spent += c2 - c1
        if profiler and profile:
            path = profile.with_name(f"{profile.stem}-{name}{profile.suffix}")
            profiler.dump_stats(str(path))
            print(f"  profile: {path}")
        rules.append(spent)
        if digest and sha.hexdigest() != digest:
            raise SystemExit(f"{name}: the output changed between repeats")
        digest = sha.hexdigest()
    shown = " ".join(f"{r:.2f}" for r in rules)
    print(f"{name}: {count} documents; NER pass {ner:.2f} CPU s; rest of extraction {shown} CPU s; sha256 {digest}")


class _Chunk:
    __slots__ = ("id", "text")

    def __init__(self, id: str, text: str) -> None:  # noqa: A002 - ChunkLike's field
        self.id = id
        self.text = text


def inputs_load(path: Path, *, passages: int) -> dict[str, Any]:
    """The documents' chunks ({"2wiki": [[{id, text}...]...], "pdf": ...}), made once (parse + chunk) and kept."""
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("passages") == passages:
            return data
    data = {"passages": passages, "2wiki": passages_chunks(passages), "pdf": pdf_chunks()}
    path.write_text(json.dumps(data), encoding="utf-8")
    print(f"inputs made: {path}")
    return data


def _chunked(document_id: str, blocks: Any) -> list[dict[str, str]]:
    from django.conf import settings

    from exograph.documents.chunking import chunk_blocks
    from exograph.graphs.embeddings import token_counter

    chunks = chunk_blocks(
        document_id=document_id,
        blocks=blocks,
        max_tokens=settings.DOCUMENTS_CHUNK_TOKENS,
        overlap_tokens=settings.DOCUMENTS_CHUNK_OVERLAP,
        count_tokens=token_counter(),
    )
    return [{"id": chunk.id, "text": chunk.text} for chunk in chunks]


def passages_chunks(passages: int) -> list[list[dict[str, str]]]:
    from exograph.documents.parsing import text_blocks

    corpus = json.loads(CORPUS_2WIKI.read_text(encoding="utf-8"))[:passages]
    return [_chunked(f"p{n}", text_blocks(text=row["text"], markdown=False)) for n, row in enumerate(corpus)]


def pdf_chunks() -> list[list[dict[str, str]]]:
    from exograph.core.errors import ExoGraphError
    from exograph.documents.models import DocumentType
    from exograph.documents.parsing import document_inspect, document_text_extract
    from exograph.documents.validation import upload_validate

    documents = []
    for path in sorted(FIXTURES.glob("*.pdf")):
        try:
            upload = upload_validate(filename=path.name, data=path.read_bytes())
            kind = DocumentType(upload.content_type)
            pages = document_inspect(data=upload.data, content_type=kind).pages
            parsed = document_text_extract(data=upload.data, content_type=kind, pages=pages)
        except ExoGraphError as exc:
            print(f"  {path.name}: {exc.code}")
            continue
        documents.append(_chunked(path.stem, parsed.blocks))
        print(f"  {path.name}: {len(documents[-1])} chunks")
    return documents


if __name__ == "__main__":
    main()
