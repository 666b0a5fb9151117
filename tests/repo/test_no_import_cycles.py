"""No import cycles between Fathom's modules, counting the imports a reader cannot see at the top of a file.

import-linter sees module-level imports only, so a cycle can hide behind an import inside a function or
under ``if TYPE_CHECKING:``: it still ties two modules into one room (neither can be read, tested or moved
without the other). This test parses every module under ``src/fathom`` with ``ast``, collects every
``import`` wherever it stands, resolves each to the module it names (``from package import submodule``
names the submodule; ``from module import name`` names the module) and fails on any cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"

# Cycles that stay, each the sorted set of modules of one cycle with why. A listed cycle that is gone fails
# the test, so the list only shrinks.
ALLOWED_CYCLES: dict[frozenset[str], str] = {
    frozenset({"fathom.workflow.dispatch", "fathom.workflow.engine"}): (
        "a type-only edge: dispatch.NodeContext.run is annotated as engine.WorkflowRun under "
        "TYPE_CHECKING (nothing is imported at run time), while the engine builds NodeContexts and looks "
        "handlers up in dispatch's NodeRegistry. Node handlers read about 20 members of the run through "
        "ctx.run (run_info, edges, registry, stop, depth, the limits, and child() whose new run the loop, "
        "parallel and tool-call nodes execute); breaking the edge means a Protocol restating those "
        "members beside WorkflowRun (a second list to keep in step, for no change at run time) or "
        "NodeContext and NodeRegistry inside engine.py (past 500 lines), so the annotation stays"
    ),
}


def module_files(src: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, is a package ``__init__``) for every module under ``src/fathom``."""
    modules: dict[str, tuple[Path, bool]] = {}
    for path in sorted((src / "fathom").rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        modules[".".join(parts)] = (path, is_package)
    return modules


def _known(name: str, modules: dict[str, tuple[Path, bool]]) -> str | None:
    """``name`` or its nearest enclosing module that is one of ours (None for third-party modules)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def imported_modules(
    module: str, is_package: bool, tree: ast.AST, modules: dict[str, tuple[Path, bool]]
) -> Iterator[str]:
    """Every Fathom module ``tree`` imports, at any depth (functions, classes, TYPE_CHECKING blocks)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found = _known(alias.name, modules)
                if found:
                    yield found
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found = submodule if submodule in modules else _known(source, modules)
                if found:
                    yield found


def import_graph(src: Path) -> dict[str, set[str]]:
    """Module → the Fathom modules it imports (itself excluded)."""
    modules = module_files(src)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = {
            target for target in imported_modules(name, is_package, tree, modules) if target != name
        }
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _path(graph: dict[str, set[str]], component: frozenset[str]) -> str:
    """One concrete loop through ``component``, e.g. ``a → b → a``, for the failure message."""
    start = min(component)
    trail = [start]
    seen = {start}
    node = start
    while True:
        following = sorted(graph[node] & component)
        nxt = next((n for n in following if n == start), None) or next(
            (n for n in following if n not in seen), None
        )
        if nxt is None or nxt == start:
            return " → ".join([*trail, start])
        trail.append(nxt)
        seen.add(nxt)
        node = nxt


def test_function_local_and_type_checking_imports_are_counted(tmp_path: Path) -> None:
    files = {
        "fathom/__init__.py": "",
        "fathom/pkg/__init__.py": "",
        "fathom/pkg/a.py": "from fathom.pkg import b\n",
        "fathom/pkg/b.py": "def late():\n    from . import a\n    return a\n",
        "fathom/pkg/c.py": "import typing\nif typing.TYPE_CHECKING:\n    from fathom.pkg.d import D\n",
        "fathom/pkg/d.py": "import fathom.pkg.c\n",
        "fathom/pkg/e.py": "import json\nfrom fathom.pkg.a import b\n",
    }
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    graph = import_graph(tmp_path)
    assert graph["fathom.pkg.e"] == {"fathom.pkg.a"}  # a name imported from a module names that module
    assert sorted(sorted(c) for c in cycles(graph)) == [
        ["fathom.pkg.a", "fathom.pkg.b"],
        ["fathom.pkg.c", "fathom.pkg.d"],
    ]


def test_fathom_has_no_import_cycle_beyond_the_explained_ones() -> None:
    graph = import_graph(SRC)
    found = cycles(graph)
    unexplained = [c for c in found if c not in ALLOWED_CYCLES]
    assert not unexplained, (
        "import cycles (break them: move the shared piece into a module both import):\n"
        + ("\n".join(f"  {_path(graph, c)}" for c in unexplained))
    )
    gone = [sorted(c) for c in ALLOWED_CYCLES if c not in found]
    assert not gone, f"these allowed cycles are gone: delete their ALLOWED_CYCLES entries: {gone}"
