"""One reading of `local:<uuid>` source keys (research.sources): research_copies, _living_documents, the pipeline's
in-place citing and its World Graph usage all turn keys into document ids through it, so a key naming no document
(a seed written without a row, another source's key) is skipped the same way everywhere."""

from __future__ import annotations

import uuid

from research.sources import KEY_PREFIX, document_uuid, document_uuids, local_key


def test_a_local_key_names_its_document_and_back() -> None:
    document = uuid.uuid4()
    key = local_key(document)
    assert key == f"{KEY_PREFIX}{document}"
    assert document_uuid(key) == document
    assert document_uuid(str(document)) == document  # a bare id, as research_copies' originals are kept


def test_keys_naming_no_document_are_skipped_in_order() -> None:
    first, second = uuid.uuid4(), uuid.uuid4()
    keys = [local_key(first), "local:seed-harbour-notes", "arxiv:2403.01234", "", local_key(second)]
    assert document_uuid("local:seed-harbour-notes") is None and document_uuid("arxiv:2403.01234") is None
    assert document_uuids(keys) == [first, second]
    assert document_uuids(iter([])) == []
