"""The import rules between our apps (README, Layout), read from the source with ast: every import counts, at the top
of a module or inside a function, except those under `if TYPE_CHECKING:` (they never run; import-linter's
exclude_type_checking_imports). The project modules (exograph/settings.py, urls.py, celery.py, asgi.py, routing.py,
mcp_hosted.py) wire the apps together and are not checked; mcp_bridge imports no app at all (tests/mcp).

Layers, lowest first; an app imports only apps below it:

    exograph.core        Django and libraries only (tests/core/test_layering.py)
    exograph.accounts    core only: a leaf every feature depends on (users, keys)
    billing              core and accounts.models only (the User it charges)
    exograph.sources     core only: outside sources know nothing of graphs, documents or accounts
    exograph.graphs  <  exograph.documents  <  exograph.chat  <  research     the features
    exograph.home        the top: landing page, dashboard, account lifecycle; nothing imports it

Doors: a module's door is how the outside reaches it: api (api.py, api_*.py), views, urls, web_urls, consumers,
admin, tasks, routing, middleware, apps, management commands; billing.metering and billing.web are the HTTP side of money (the
Idempotency-Key/dry_run meter, the web forms' tokens), doors too. No module imports another app's door, with one
exception: a door (or an AppConfig) may use the shared door machinery of core (core.api: the DRF error envelope and
helpers; core.consumers; core.views: the /readyz registry) and billing's HTTP side. So services, selectors, models
and the rest never reach into another app's doors, and tasks are sent by name, never imported.

And no import cycle among the apps (features may import one another only in one direction).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("exograph", "billing", "research")
APPS = (
    "exograph.core",
    "exograph.accounts",
    "billing",
    "exograph.sources",
    "exograph.graphs",
    "exograph.documents",
    "exograph.chat",
    "research",
    "exograph.home",
)
FEATURES = ("exograph.graphs", "exograph.documents", "exograph.chat", "research")
DOOR_NAMES = {
    "api",
    "views",
    "urls",
    "web_urls",
    "consumers",
    "admin",
    "tasks",
    "routing",
    "apps",
    "management",
    "middleware",
}
HTTP_HELPERS = {"billing.metering", "billing.web"}  # billing's doors that other apps' doors use
CORE_DOORS_SHARED = {"exograph.core.api", "exograph.core.consumers", "exograph.core.views"}
# Import cycles between apps not yet broken, each with its reason; the test fails when one goes (delete it here) or
# a new one appears.
KNOWN_CYCLES = {
    # graphs' explorer and World Graph evidence link passages to the document viewer (documents.selectors:
    # document_view_url, documents_viewable), while documents writes into graphs. Open (issue 24).
    frozenset({"exograph.graphs", "exograph.documents"}),
}


def app_of(module: str) -> str | None:
    for app in APPS:
        if module == app or module.startswith(app + "."):
            return app
    return None


def is_door(module: str) -> bool:
    app = app_of(module)
    if app is None:
        return False
    if module in HTTP_HELPERS:
        return True
    first = module[len(app) + 1 :].split(".")[0]
    return first in DOOR_NAMES or first.startswith("api_")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return skipped


def imports() -> Iterator[tuple[str, str, str]]:
    """(importing module, imported module, 'path:line') for every import of one of our apps by another app's module."""
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            module = _module_name(path)
            if app_of(module) is None:
                continue  # the project's wiring (settings, urls, celery, asgi, routing, mcp_hosted)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            skipped = _type_checking_nodes(tree)
            package_parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            for node in ast.walk(tree):
                if id(node) in skipped:
                    continue
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = package_parts[: len(package_parts) - node.level + 1]
                        targets = [".".join([*base, node.module] if node.module else base)]
                    else:
                        targets = [node.module or ""]
                    # `from app import module` imports the module: count it (doors are modules)
                    targets = [f"{targets[0]}.{alias.name}" for alias in node.names] + targets
                elif isinstance(node, ast.Import):
                    targets = [alias.name for alias in node.names]
                else:
                    continue
                seen = set()
                for target in targets:
                    if app_of(target) and app_of(target) != app_of(module) and target not in seen:
                        seen.add(target)
                        yield module, target, f"{path.relative_to(ROOT)}:{node.lineno}"


def _real(target: str) -> str:
    """`from pkg import name`: the module pkg.name if it is one, else pkg."""
    candidate = ROOT.joinpath(*target.split("."))
    if candidate.with_suffix(".py").exists() or (candidate / "__init__.py").exists():
        return target
    return target.rsplit(".", 1)[0]


EDGES = sorted({(m, _real(t), where) for m, t, where in imports()})


def test_the_rules_see_the_imports():
    """The reader finds what it must (a broken walk would pass every rule)."""
    assert ("exograph.home.views", "exograph.documents.selectors") in {(m, t) for m, t, _ in EDGES}
    assert any(m.startswith("research.") and t.startswith("billing.") for m, t, _ in EDGES)
    assert is_door("billing.metering") and is_door("exograph.graphs.api_import") and is_door("research.tasks")
    assert not is_door("exograph.sources.web") and not is_door("billing.services.caps")


@pytest.mark.parametrize(
    ("app", "allowed"),
    [
        ("exograph.accounts", ("exograph.core",)),
        ("exograph.sources", ("exograph.core",)),
        ("billing", ("exograph.core", "exograph.accounts.models")),
    ],
)
def test_the_base_apps_import_only_what_is_below_them(app, allowed):
    offenders = [
        f"{where} {target}"
        for module, target, where in EDGES
        if app_of(module) == app and not any(target == a or target.startswith(a + ".") for a in allowed)
    ]
    assert offenders == []


def test_nothing_imports_the_top_layer():
    assert [f"{where} {target}" for _, target, where in EDGES if app_of(target) == "exograph.home"] == []


def test_features_import_only_features_below_them():
    order = {app: rank for rank, app in enumerate(FEATURES)}
    offenders = [
        f"{where} {target}"
        for module, target, where in EDGES
        if app_of(module) in order
        and app_of(target) in order
        and order[app_of(target)] > order[app_of(module)]  # type: ignore[index]
        and frozenset({app_of(module), app_of(target)}) not in KNOWN_CYCLES
    ]
    assert offenders == []


def test_no_module_imports_another_apps_door():
    offenders = []
    for module, target, where in EDGES:
        if not is_door(target):
            continue
        shared = target in HTTP_HELPERS or target in CORE_DOORS_SHARED
        if is_door(module) and shared:
            continue
        offenders.append(f"{where} {module} -> {target}")
    assert offenders == []


def _cycles(edges: set[tuple[str, str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one app (Tarjan)."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                top = stack.pop()
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_cycles():
    assert _cycles({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [frozenset({"a", "b", "c"})]
    assert _cycles({("a", "b"), ("b", "c")}) == []


def test_no_import_cycle_among_the_apps():
    app_edges = {(app_of(m), app_of(t)) for m, t, _ in EDGES}
    assert set(_cycles(app_edges)) == KNOWN_CYCLES  # type: ignore[arg-type]
