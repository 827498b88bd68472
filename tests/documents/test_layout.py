"""The documents app's shape: one-way imports (tasks → services), no module past 500 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import exograph.documents

APP = Path(exograph.documents.__file__).parent


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module, at top level) for every import in the file."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, id(node) in top))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, id(node) in top) for alias in node.names)
    return found


def test_services_never_import_the_tasks():
    modules = [APP / "services.py"] if (APP / "services.py").exists() else sorted((APP / "services").glob("*.py"))
    assert modules
    for path in modules:
        assert not [module for module, _ in _imports(path) if module.startswith("exograph.documents.tasks")], path


def test_tasks_import_services_at_module_level_only():
    imports = _imports(APP / "tasks.py")
    assert ("exograph.documents.services", True) in imports
    assert [module for module, top in imports if not top] == []


def test_no_documents_module_is_past_500_lines():
    long = [str(p.relative_to(APP)) for p in APP.rglob("*.py") if len(p.read_text().splitlines()) > 500]
    assert long == []
