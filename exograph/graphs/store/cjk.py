"""CJK character bigrams for the full-text index.

RediSearch inside FalkorDB splits text on spaces and ASCII punctuation only, so a Japanese or
Chinese sentence is one long token and `宇宙塵` or `空気` inside it is never found (the friso
`language:'chinese'` tokenizer segments Chinese words but misses exact Japanese terms). Chunks
and entities therefore carry a second indexed property, `terms`: the overlapping character
bigrams of every run of CJK letters (Han, Hiragana, Katakana, Hangul) in their text, separated by
spaces (a one-character run stays as itself). Non-CJK text is not copied there, so English
matching and scores stay exactly those of `text`/`name`/`description`. The query builder turns a
CJK run of the user's text into the same bigrams.
"""

from __future__ import annotations

import re
import unicodedata

# Letters of scripts written without spaces: Hangul Jamo, Hiragana, Katakana (with the prolonged
# sound mark and phonetic extensions), Hangul compatibility Jamo, CJK ideographs (extension A,
# unified, compatibility, supplementary planes), Hangul syllables, halfwidth Katakana and Hangul.
CJK_RUN = re.compile(
    "[\u1100-\u11ff\u3040-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff66-\uffdc\U00020000-\U0003134f]+"
)


def has_cjk(text: str) -> bool:
    return bool(CJK_RUN.search(text or ""))


def bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of one CJK run; a single character is its own term."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_terms(*texts: str) -> str:
    """The bigram copy of the CJK runs in texts (NFKC-normalised), space-separated; '' if none."""
    out: list[str] = []
    for text in texts:
        for run in CJK_RUN.findall(unicodedata.normalize("NFKC", text or "")):
            out.extend(bigrams(run))
    return " ".join(out)


def cjk_runs(token: str) -> list[str]:
    """The CJK runs of one query token (NFKC-normalised)."""
    return CJK_RUN.findall(unicodedata.normalize("NFKC", token))
