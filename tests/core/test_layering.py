"""core is the bottom layer: it may use Django and libraries, never another app of ours."""

from __future__ import annotations

import ast
from pathlib import Path

import exograph.core

OUR_PACKAGES = ("exograph", "billing", "research", "mcp_bridge")


def _our_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in OUR_PACKAGES and not (name == "exograph.core" or name.startswith("exograph.core.")):
                found.append(f"{path.name}:{node.lineno} imports {name}")
    return found


def test_core_imports_no_app_of_ours():
    root = Path(exograph.core.__file__).parent
    offenders = [hit for path in sorted(root.rglob("*.py")) for hit in _our_imports(path)]
    assert offenders == []
