"""Upload validation: names, base64, sizes, types by bytes, DOCX zip pre-checks and file_path mode."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from exograph.core.errors import PayloadTooLarge, PermissionDenied, UnsupportedMediaType, ValidationError
from exograph.documents.models import DocumentType
from exograph.documents.validation import (
    content_decode_base64,
    filename_clean,
    upload_path_read,
    upload_path_resolve,
    upload_validate,
)
from tests.documents.conftest import billion_laughs_docx, docx_with_paragraphs, fixture_bytes, zip_bomb_docx


@pytest.mark.parametrize("name", ["report.pdf", "Notes 2024.DOCX", "résumé.pdf"])
def test_filename_clean_accepts_plain_names(name):
    assert filename_clean(name) == name


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("../etc/passwd.pdf", "invalid_filename"),
        ("..\\boot.pdf", "invalid_filename"),
        ("dir/report.pdf", "invalid_filename"),
        ("bad\x00name.pdf", "invalid_filename"),
        ("bad\nname.pdf", "invalid_filename"),
        ("bell\x07.pdf", "invalid_filename"),
        ("", "invalid_filename"),
        ("   ", "invalid_filename"),
        ("x" * 300 + ".pdf", "invalid_filename"),
        ("report.rtf", "unsupported_extension"),
        ("report", "unsupported_extension"),
        (".pdf", "unsupported_extension"),
    ],
)
def test_filename_clean_rejects_unsafe_names(name, code):
    with pytest.raises(ValidationError) as caught:
        filename_clean(name)
    assert caught.value.code == code
    assert caught.value.hint


def test_base64_decodes_standard_urlsafe_and_data_urls():
    raw = b"%PDF-1.4 \xff\xfe binary"
    assert content_decode_base64(base64.b64encode(raw).decode()) == raw
    assert content_decode_base64(base64.urlsafe_b64encode(raw).decode().rstrip("=")) == raw
    assert content_decode_base64("data:application/pdf;base64," + base64.b64encode(raw).decode()) == raw


@pytest.mark.parametrize("value", ["not base64 at all!", "%%%%", "", "YWJj*ZGVm"])
def test_base64_that_is_not_base64_is_a_clear_400(value):
    with pytest.raises(ValidationError) as caught:
        content_decode_base64(value)
    assert caught.value.status == 400
    assert caught.value.code == "invalid_base64"
    assert "base64" in caught.value.hint


def test_empty_file_is_refused():
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename="empty.pdf", data=b"")
    assert caught.value.code == "empty_file"


def test_oversize_file_is_413(settings):
    settings.DOCUMENTS_MAX_BYTES = 1000
    with pytest.raises(PayloadTooLarge) as caught:
        upload_validate(filename="big.pdf", data=b"%PDF-1.4" + b"0" * 2000)
    assert caught.value.status == 413


def test_real_pdf_and_docx_are_detected_by_bytes():
    assert upload_validate(filename="a.pdf", data=fixture_bytes("pdf/sf_pdflatex-4-pages.pdf")).content_type == (
        DocumentType.PDF
    )
    docx = upload_validate(filename="a.docx", data=fixture_bytes("docx/pd_test.docx"))
    assert docx.content_type == DocumentType.DOCX


def test_wrong_extension_is_refused_naming_the_right_one():
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename="paper.docx", data=fixture_bytes("pdf/sf_pdflatex-4-pages.pdf"))
    assert caught.value.code == "extension_mismatch"
    assert ".pdf" in caught.value.hint
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename="letter.pdf", data=fixture_bytes("docx/pd_test.docx"))
    assert caught.value.code == "extension_mismatch"


@pytest.mark.parametrize(
    ("fixture", "name", "kind", "right"),
    [
        ("pdf/sf_pdflatex-4-pages.pdf", "paper.txt", "PDF", ".pdf"),
        ("docx/pd_test.docx", "letter.md", "DOCX", ".docx"),
        ("docx/pd_test.docx", "letter.txt", "DOCX", ".docx"),
    ],
)
def test_a_document_under_a_text_extension_is_told_its_own_extension(fixture, name, kind, right):
    # A PDF saved as .txt is not "binary bytes in a text file" to its owner: it is a PDF with the wrong name.
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename=name, data=fixture_bytes(fixture))
    assert caught.value.code == "extension_mismatch"
    assert kind in caught.value.message and f".{name.rsplit('.', 1)[1]}" in caught.value.message
    assert f"end in {right}" in caught.value.hint


@pytest.mark.parametrize("name", ["minutes.pdf", "minutes.docx"])
def test_plain_text_under_a_document_extension_is_told_to_be_renamed_txt(name):
    notes = b"Minutes of the harbour trust, 3 March.\nThe trust will repaint the lighthouse in June.\n"
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename=name, data=notes)
    assert caught.value.code == "extension_mismatch"
    assert "plain text" in caught.value.message.lower() and f".{name.rsplit('.', 1)[1]}" in caught.value.message
    assert ".txt" in caught.value.hint and ".md" in caught.value.hint


def test_unknown_bytes_are_415():
    with pytest.raises(UnsupportedMediaType):
        upload_validate(filename="x.pdf", data=b"GIF89a....")


def test_plain_zip_is_not_a_docx():
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(UnsupportedMediaType):
        upload_validate(filename="x.docx", data=buffer.getvalue())


def test_encrypted_docx_ole_container_is_refused_with_password_hint():
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename="p.docx", data=fixture_bytes("docx/poi_bug53475-password-is-pass.docx"))
    assert caught.value.code == "encrypted_document"
    assert "password" in caught.value.hint


@pytest.mark.parametrize(
    "name", ["docx/poi_truncated62886.docx", "docx/poi_clusterfuzz-POIXWPFFuzzer-6442791109263360.docx"]
)
def test_corrupt_docx_fixtures_are_refused_before_parsing(name):
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename="c.docx", data=fixture_bytes(name))
    assert caught.value.code == "corrupt_document"


def test_zip_bomb_renamed_docx_is_refused():
    data = zip_bomb_docx()
    assert len(data) < 1024 * 1024  # 200 MB of zeros deflates to a few hundred KB
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename="bomb.docx", data=data)
    assert caught.value.code == "docx_decompression_limit"


def test_docx_with_entity_expansion_is_refused():
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename="lol.docx", data=billion_laughs_docx())
    assert caught.value.code == "docx_xml_entities"


def test_docx_with_too_many_parts_is_refused(settings):
    settings.DOCUMENTS_DOCX_MAX_ENTRIES = 2
    with pytest.raises(ValidationError) as caught:
        upload_validate(filename="many.docx", data=docx_with_paragraphs("hello"))
    assert caught.value.code == "docx_too_complex"


# --- file_path mode ---------------------------------------------------------------------------


@pytest.fixture
def upload_root(tmp_path, settings):
    root = tmp_path / "root"
    root.mkdir()
    settings.EXOGRAPH_UPLOAD_ROOT = str(root)
    return root


def test_file_path_mode_is_off_by_default(settings):
    settings.EXOGRAPH_UPLOAD_ROOT = ""
    with pytest.raises(PermissionDenied) as caught:
        upload_path_resolve("report.pdf")
    assert caught.value.code == "file_path_disabled"
    assert "file_content_base64" in caught.value.hint


def test_file_path_under_root_is_read(upload_root):
    (upload_root / "sub").mkdir()
    (upload_root / "sub" / "a.pdf").write_bytes(fixture_bytes("pdf/sf_pdflatex-4-pages.pdf"))
    resolved = upload_path_resolve("sub/a.pdf")
    assert resolved == upload_root / "sub" / "a.pdf"
    assert upload_path_read(resolved).startswith(b"%PDF-")
    assert upload_path_resolve(str(upload_root / "sub" / "a.pdf")) == resolved


def test_file_path_with_dotdot_is_refused(upload_root):
    with pytest.raises(ValidationError) as caught:
        upload_path_resolve("sub/../../etc/passwd")
    assert "'..'" in caught.value.message


def test_absolute_path_outside_root_is_403(upload_root, tmp_path):
    outside = tmp_path / "outside.pdf"
    outside.write_bytes(b"%PDF-1.4")
    with pytest.raises(PermissionDenied) as caught:
        upload_path_resolve(str(outside))
    assert caught.value.code == "path_outside_root"
    assert str(upload_root) in caught.value.hint


def test_symlink_leaving_root_is_403(upload_root, tmp_path):
    outside = tmp_path / "secret.pdf"
    outside.write_bytes(b"%PDF-1.4")
    (upload_root / "link.pdf").symlink_to(outside)
    (upload_root / "dirlink").symlink_to(tmp_path)
    with pytest.raises(PermissionDenied):
        upload_path_resolve("link.pdf")
    with pytest.raises(PermissionDenied):
        upload_path_resolve("dirlink/secret.pdf")


def test_special_files_are_refused(upload_root):
    os.mkfifo(upload_root / "pipe.pdf")
    (upload_root / "folder.pdf").mkdir()
    for name in ("pipe.pdf", "folder.pdf"):
        with pytest.raises(ValidationError) as caught:
            upload_path_resolve(name)
        assert caught.value.code == "not_a_regular_file"
    with pytest.raises(PermissionDenied):
        upload_path_resolve("/dev/null")


def test_missing_file_path_is_400(upload_root):
    with pytest.raises(ValidationError) as caught:
        upload_path_resolve("nope.pdf")
    assert caught.value.code == "file_not_found"


def test_upload_root_itself_must_exist_to_read(upload_root):
    assert isinstance(upload_root, Path)
    with pytest.raises(ValidationError):
        upload_path_resolve("")
