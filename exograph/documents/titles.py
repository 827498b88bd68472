"""A document's display title when the upload names none: the file's own title (a PDF's /Title, a text or Markdown
note's opening heading) stands in for a generic file name ("document.pdf", "scan_0001.pdf", "Download (3).pdf",
"notes.txt", "New Text Document.txt"); a descriptive file name is kept.

A metadata title is taken only when it reads as a title: not itself a file name ("Binder1.pdf", "notes.txt"), not
an editor's placeholder ("Untitled", "Microsoft Word - Document1") and with at least two letters.
"""

from __future__ import annotations

import re

from exograph.documents.validation import title_clean

# Words that name no document: what scanners, browsers, editors and mail clients call a file they save.
GENERIC_WORDS = frozenset(
    "document documents doc docs file files scan scanned scans untitled unnamed noname download downloads "
    "upload uploaded attachment attachments binder print printout output export exported image img new copy "
    "final draft version temp tmp pdf docx word page pages print scanner text txt md markdown note notes readme".split()
)
# A run of digits, a version or copy marker ("v2", "final2"), or a long hexadecimal or UUID-like id.
_NUMERIC = re.compile(r"\d+|v\d+|(?=[a-f]*\d)[0-9a-f]{8,}", re.IGNORECASE)
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
_FILE_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
# A metadata title ending like a file name: the editor recorded the file it was saved from.
_DOCUMENT_EXTENSION = re.compile(
    r"\.(?:pdf|docx?|odt|rtf|txt|md|tex|dvi|ps|eps|html?|xml|indd|qxd|pages|png|jpe?g|tiff?)$", re.IGNORECASE
)
_EDITOR_PREFIX = re.compile(r"^(?:Microsoft\s+(?:Word|PowerPoint|Excel)\s*-\s*)", re.IGNORECASE)


def filename_generic(filename: str) -> bool:
    """Whether a file name says nothing of its document: every word of its stem is a generic word, a number, a
    version or an id ("document.pdf", "Scan_0001.pdf", "download (2).pdf", "3f9a0c1d2e.pdf")."""
    stem = _FILE_EXTENSION.sub("", filename.strip())
    words = [word.casefold() for word in _WORDS.findall(stem)]
    return all(word in GENERIC_WORDS or _NUMERIC.fullmatch(_split_digits(word)) for word in words)


def _split_digits(word: str) -> str:
    """A word with its trailing number taken off when the rest is generic ("binder1", "scan0001"): the number."""
    head = word.rstrip("0123456789")
    return word[len(head) :] if head in GENERIC_WORDS and head != word else word


def metadata_title(title: str) -> str:
    """The metadata title as a display title, or "" when it is a file name, a placeholder or empty."""
    text = " ".join(title.split())
    if _EDITOR_PREFIX.match(text):  # "Microsoft Word - Minutes of May.doc": the document's own name
        text = _DOCUMENT_EXTENSION.sub("", _EDITOR_PREFIX.sub("", text)).strip()
    if not text or _DOCUMENT_EXTENSION.search(text) or filename_generic(text):
        return ""
    if sum(ch.isalpha() for ch in text) < 2:
        return ""
    return title_clean(text[:500])


# A Markdown heading: "# Title" (closing hashes dropped), or a line underlined with === or --- (setext).
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(?P<text>.*?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_EMPHASIS = re.compile(r"^[*_`]+|[*_`]+$")


def text_heading(text: str) -> str:
    """The heading a text or Markdown note opens with ("# Wrekin Wheelers rules", or a line underlined with ===),
    or "" when its first line is not a heading: a note's first paragraph is not its title."""
    lines = [line for line in text[:4000].splitlines() if line.strip()][:2]
    if not lines:
        return ""
    atx = _ATX_HEADING.match(lines[0])
    if atx is not None:
        heading = atx.group("text")
    elif len(lines) == 2 and _SETEXT_UNDERLINE.match(lines[1]) and not lines[0].startswith((" " * 4, "\t")):
        heading = lines[0]
    else:
        return ""
    return _EMPHASIS.sub("", heading.strip()).strip()


def title_for_upload(*, filename: str, given: str, metadata: str) -> str:
    """The title to store: the one the upload gave, else the file's own title (`metadata`: a PDF's /Title, a note's
    opening heading) when the file name is generic, else "" (the file name is shown)."""
    if given or not filename_generic(filename):
        return given
    return metadata_title(metadata)
