"""An import batch's rows, read and validated before anything is charged or written (graphs.services.imports):
triples as JSON Lines or CSV, or a graph's own export read back. A bad row refuses the batch with its line number
(400 invalid_import_row, `line` and `field` in the envelope)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from exograph.core.errors import ValidationError
from exograph.graphs.types import MAX_NAME_LENGTH, normalize_name

IMPORT_FORMATS = ("jsonl", "csv")
MAX_ROWS = 10_000  # a batch is written inside its request (embedding its passages and entities): split larger files
MAX_PREDICATE = 100
MAX_EVIDENCE = 10_000
MAX_SOURCE = 255
DEFAULT_TYPE = "concept"
LIST_SEPARATOR = "|"  # the export's CSV lists
TRIPLE_FIELDS = ("subject", "predicate", "object", "source", "evidence", "subject_type", "object_type", "page")
EXPORT_RECORDS = ("graph", "document", "entity", "relation", "passage")


@dataclass
class Triple:
    line: int
    subject: str
    predicate: str
    object: str
    subject_type: str | None = None
    object_type: str | None = None
    source: str = ""
    evidence: str = ""
    page: int | None = None
    weight: int = 1


@dataclass
class Declared:
    line: int
    name: str
    type: str
    description: str = ""
    aliases: tuple[str, ...] = ()
    source: str = ""


def _bad(line: int, message: str, *, field_name: str = "") -> ValidationError:
    return ValidationError(
        f"Line {line}: {message} Nothing was imported.",
        code="invalid_import_row",
        hint="Fix that row and send the whole batch again (rows: subject, predicate, object, optional source, "
        "evidence, subject_type, object_type, page).",
        extra={"line": line, **({"field": field_name} if field_name else {})},
    )


def _text(value: Any, *, line: int, name: str, required: bool, limit: int) -> str:
    if value is None or value == "":
        if required:
            raise _bad(line, f"`{name}` is missing or empty.", field_name=name)
        return ""
    if not isinstance(value, str):
        raise _bad(line, f"`{name}` must be text.", field_name=name)
    text = " ".join(value.replace("\x00", "").split())
    if required and not text:
        raise _bad(line, f"`{name}` is empty.", field_name=name)
    if len(text) > limit:
        raise _bad(line, f"`{name}` is longer than {limit} characters.", field_name=name)
    return text


def _page(value: Any, *, line: int) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise _bad(line, "`page` must be a whole number of at least 1.", field_name="page")
    try:
        page = int(str(value).strip())
    except ValueError:
        raise _bad(line, "`page` must be a whole number of at least 1.", field_name="page") from None
    if page < 1:
        raise _bad(line, "`page` must be a whole number of at least 1.", field_name="page")
    return page


def _triple(values: dict[str, Any], line: int) -> Triple:
    unknown = sorted(set(values) - set(TRIPLE_FIELDS))
    if unknown:
        raise _bad(line, f"unknown field {unknown[0][:40]!r} (fields: {', '.join(TRIPLE_FIELDS)}).")
    predicate = _text(values.get("predicate"), line=line, name="predicate", required=True, limit=MAX_PREDICATE)
    if not re.search(r"[^\W_]", predicate):
        raise _bad(line, "`predicate` has no letter or digit.", field_name="predicate")
    types = {}
    for name in ("subject_type", "object_type"):
        kind = _text(values.get(name), line=line, name=name, required=False, limit=64)
        types[name] = kind or None
    subject = _text(values.get("subject"), line=line, name="subject", required=True, limit=MAX_NAME_LENGTH)
    obj = _text(values.get("object"), line=line, name="object", required=True, limit=MAX_NAME_LENGTH)
    if normalize_name(subject) == normalize_name(obj):
        raise _bad(line, "`subject` and `object` name the same entity.", field_name="object")
    return Triple(
        line=line,
        subject=subject,
        object=obj,
        predicate=predicate,
        subject_type=types["subject_type"],
        object_type=types["object_type"],
        source=_text(values.get("source"), line=line, name="source", required=False, limit=MAX_SOURCE),
        evidence=_text(values.get("evidence"), line=line, name="evidence", required=False, limit=MAX_EVIDENCE),
        page=_page(values.get("page"), line=line),
    )


class _ExportReader:
    """A graph's own export (jsonl records or csv rows with a `record` column) as entity records and triples."""

    def __init__(self) -> None:
        self.documents: dict[str, str] = {}  # document id -> its source name (title, else file name)
        self.passages: dict[str, tuple[str, int | None]] = {}  # chunk id -> (text, page)
        self.entities: dict[str, Declared] = {}  # entity id in the export -> record
        self.relations: list[tuple[int, dict[str, Any]]] = []

    def add(self, record: dict[str, Any], line: int) -> None:
        kind = record.get("record")
        if kind == "document":
            doc_id = str(record.get("id") or "")
            name = str(record.get("title") or record.get("filename") or "")
            self.documents[doc_id] = " ".join(name.split())[:MAX_SOURCE]
        elif kind == "passage":
            self.passages[str(record.get("chunk_id") or "")] = (
                str(record.get("text") or "")[:MAX_EVIDENCE],
                _page(record.get("page"), line=line),
            )
        elif kind == "entity":
            eid = _text(record.get("id"), line=line, name="id", required=True, limit=200)
            aliases = record.get("aliases") or []
            if isinstance(aliases, str):
                aliases = [a for a in aliases.split(LIST_SEPARATOR) if a.strip()]
            if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                raise _bad(line, "`aliases` must be a list of names.", field_name="aliases")
            docs = record.get("document_ids") or []
            if isinstance(docs, str):
                docs = [d for d in docs.split(LIST_SEPARATOR) if d]
            self.entities[eid] = Declared(
                line=line,
                name=_text(record.get("name"), line=line, name="name", required=True, limit=MAX_NAME_LENGTH),
                type=_text(record.get("type"), line=line, name="type", required=False, limit=64) or DEFAULT_TYPE,
                description=_text(record.get("description"), line=line, name="description", required=False, limit=2000),
                aliases=tuple(" ".join(a.split())[:MAX_NAME_LENGTH] for a in aliases if a.strip()),
                source=str(docs[0]) if docs else "",
            )
        elif kind == "relation":
            self.relations.append((line, record))
        elif kind != "graph":
            raise _bad(line, f"unknown record {str(kind)[:40]!r} (records: {', '.join(EXPORT_RECORDS)}).")

    def finish(self) -> tuple[list[Triple], list[Declared]]:
        declared = []
        for entity in self.entities.values():
            entity.source = self.documents.get(entity.source, "")
            declared.append(entity)
        triples = []
        for line, record in self.relations:
            ends = []
            for name in ("source", "target"):
                eid = str(record.get(name) or "")
                if eid not in self.entities:
                    raise _bad(
                        line, f"the relation's {name} {eid[:60]!r} is no entity record of this file.", field_name=name
                    )
                ends.append(self.entities[eid])
            predicate = _text(record.get("type"), line=line, name="type", required=True, limit=MAX_PREDICATE)
            chunk_ids = record.get("chunk_ids") or []
            if isinstance(chunk_ids, str):
                chunk_ids = [c for c in chunk_ids.split(LIST_SEPARATOR) if c]
            evidence, page, source = "", None, ""
            for item in record.get("evidence") or []:
                if isinstance(item, dict) and item.get("chunk_id") in self.passages:
                    evidence, page = self.passages[item["chunk_id"]]
                    source = self.documents.get(str(item.get("document_id") or ""), "")
                    break
            if not source:
                docs = record.get("document_ids") or []
                if isinstance(docs, str):
                    docs = [d for d in docs.split(LIST_SEPARATOR) if d]
                source = self.documents.get(str(docs[0]), "") if docs else ""
            strength = record.get("strength")
            try:
                weight = 1 if strength is None or strength == "" else max(1, int(strength))
            except (TypeError, ValueError):
                raise _bad(line, "`strength` must be a whole number.", field_name="strength") from None
            triples.append(
                Triple(
                    line=line,
                    subject=ends[0].name,
                    subject_type=ends[0].type,
                    predicate=predicate,
                    object=ends[1].name,
                    object_type=ends[1].type,
                    source=source,
                    evidence=" ".join(evidence.split()),
                    page=page,
                    weight=weight,
                )
            )
        return triples, declared


def _jsonl_records(content: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, raw in enumerate(content.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            raise _bad(number, "not a JSON object.") from None
        if not isinstance(value, dict):
            raise _bad(number, "not a JSON object.")
        yield number, value


def _csv_records(content: str) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(content, newline=""))
    try:
        header = reader.fieldnames
    except csv.Error as exc:
        raise _bad(1, f"not CSV ({exc}).") from None
    if not header:
        raise _bad(1, "the CSV has no header row (subject,predicate,object[,source,evidence,...]).")
    if "record" not in header:
        unknown = [name for name in header if name not in TRIPLE_FIELDS]
        if unknown:
            raise _bad(1, f"unknown column {unknown[0][:40]!r} (columns: {', '.join(TRIPLE_FIELDS)}).")
    try:
        for row in reader:
            if None in row:
                raise _bad(reader.line_num, "more values than columns.")
            if not any((value or "").strip() for value in row.values()):
                continue
            if "record" in header:
                yield reader.line_num, {k: v for k, v in row.items() if v not in (None, "")}
            else:
                yield reader.line_num, {k: v for k, v in row.items() if k is not None}
    except csv.Error as exc:
        raise _bad(reader.line_num, f"not CSV ({exc}).") from None


def import_parse(*, content: str, fmt: str) -> tuple[list[Triple], list[Declared], int]:
    """(triples, entity records, rows) of a batch, every row validated. Raises ValidationError naming the line."""
    if fmt not in IMPORT_FORMATS:
        raise ValidationError(
            f"Unknown import format {fmt[:40]!r}; accepted: {', '.join(IMPORT_FORMATS)}.",
            code="invalid_import_format",
            hint="Send format jsonl or csv.",
        )
    records = _jsonl_records(content) if fmt == "jsonl" else _csv_records(content)
    triples: list[Triple] = []
    export = _ExportReader()
    rows = 0
    for line, record in records:
        rows += 1
        if rows > MAX_ROWS:
            raise _bad(line, f"a batch holds at most {MAX_ROWS:,} rows; split the file.")
        if "record" in record:
            export.add(record, line)
        else:
            triples.append(_triple(record, line))
    more, declared = export.finish()
    triples.extend(more)
    counted = len(triples) + len(declared)
    if not counted:
        raise ValidationError(
            "The batch holds no triple.", code="empty_import", hint="Send at least one subject, predicate, object row."
        )
    return triples, declared, counted
