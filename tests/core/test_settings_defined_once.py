"""exograph/settings.py assigns each setting once: a second assignment silently overrides the first (issue 24)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from django.conf import settings

SETTINGS = Path(__file__).resolve().parents[2] / "exograph" / "settings.py"


def test_every_setting_is_assigned_once_at_module_level() -> None:
    names: Counter[str] = Counter()
    for node in ast.parse(SETTINGS.read_text()).body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        names.update(target.id for target in targets if isinstance(target, ast.Name))
    assert [name for name, count in names.items() if count > 1] == []


def test_research_source_max_chars_is_the_effective_60000() -> None:
    assert settings.RESEARCH_SOURCE_MAX_CHARS == 60_000
