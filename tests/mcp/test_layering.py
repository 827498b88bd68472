"""mcp_bridge talks only to the REST API: it imports no code of the apps (exograph, billing, research)."""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_bridge

APPS = ("exograph", "billing", "research")


def test_bridge_imports_no_app_code():
    offenders = []
    for path in sorted(Path(mcp_bridge.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module]
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            offenders += [f"{path.name}:{node.lineno} {n}" for n in names if n.split(".")[0] in APPS]
    assert offenders == []
