"""No dead rooms: fail when a public function of a domain package has no caller outside the tests.

DESIGN.md §2: "every public function of a domain package has a caller on a product path (a route, a
node, the worker, the CLI). A rule that only a test reaches does not exist for the user."

What counts as a public function: a module-level ``def`` / ``async def`` whose name does not start with
``_``, in ``fathom.tools``, ``fathom.agent``, ``fathom.security``, ``fathom.knowledge`` or
``fathom.workflow``. What counts as a caller: the name read anywhere under ``src/fathom`` (a call, a
reference passed along, an attribute ``module.name``), except inside the function itself, in an
``import`` line, or in ``__all__``: re-exporting a function does not call it. A function with a
decorator (``@register_node(...)``) is registered, hence reached. Names are matched by spelling, so
the check is lenient where two functions share a name; it never reports a function that is used.

Usage: ``python scripts/check_dead_code.py`` (run by ``make test``). Exit code 1 lists each dead
function and what to do; stale whitelist lines fail too, so the whitelist stays short.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
TESTS = ROOT / "tests"
WHITELIST = ROOT / "scripts" / "dead_code_whitelist.txt"
PACKAGES = ("tools", "agent", "security", "knowledge", "workflow")


@dataclass(frozen=True)
class PublicFunction:
    """One module-level public function: its dotted name, where it is, and its body's span."""

    qualname: str
    name: str
    path: Path
    line: int
    end_line: int


def _python_files(folder: Path) -> Iterator[Path]:
    yield from sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def public_functions(src: Path = SRC) -> list[PublicFunction]:
    """Every undecorated module-level public function of the checked packages."""
    found: list[PublicFunction] = []
    for package in PACKAGES:
        for path in _python_files(src / "fathom" / package):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in tree.body:
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                if node.name.startswith("_") or node.decorator_list:
                    continue
                qualname = f"{_module_name(path, src)}.{node.name}"
                end = node.end_lineno or node.lineno
                found.append(PublicFunction(qualname, node.name, path, node.lineno, end))
    return found


def _references(path: Path) -> Iterable[tuple[str, int]]:
    """(name, line) for every name read in ``path``: plain names and attribute names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id, node.lineno
        elif isinstance(node, ast.Attribute):
            yield node.attr, node.lineno


def referenced_names(folder: Path, functions: list[PublicFunction]) -> dict[str, set[Path]]:
    """Name → files under ``folder`` that read it (a function's own body does not count)."""
    spans: dict[Path, list[tuple[str, int, int]]] = {}
    for fn in functions:
        spans.setdefault(fn.path, []).append((fn.name, fn.line, fn.end_line))
    wanted = {fn.name for fn in functions}
    users: dict[str, set[Path]] = {}
    for path in _python_files(folder):
        own = spans.get(path, [])
        for name, line in _references(path):
            if name not in wanted:
                continue
            if any(name == n and start <= line <= end for n, start, end in own):
                continue
            users.setdefault(name, set()).add(path)
    return users


def load_whitelist(path: Path = WHITELIST) -> dict[str, str]:
    """``dotted.name  # why`` lines → {name: why}; a line without a reason is refused."""
    entries: dict[str, str] = {}
    if not path.exists():
        return entries
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, _, why = line.partition("#")
        if not why.strip():
            raise SystemExit(f"{path.name}:{number}: '{name.strip()}' needs a reason after '#'")
        entries[name.strip()] = why.strip()
    return entries


def find_dead(
    src: Path = SRC, tests: Path = TESTS, whitelist_path: Path = WHITELIST
) -> tuple[list[tuple[PublicFunction, bool]], list[str]]:
    """(dead functions with whether a test uses them, stale whitelist names)."""
    functions = public_functions(src)
    in_src = referenced_names(src / "fathom", functions)
    in_tests = referenced_names(tests, functions) if tests.exists() else {}
    whitelist = load_whitelist(whitelist_path)
    dead: list[tuple[PublicFunction, bool]] = []
    still_dead: set[str] = set()
    for fn in functions:
        if fn.name in in_src:
            continue
        still_dead.add(fn.qualname)
        if fn.qualname not in whitelist:
            dead.append((fn, fn.name in in_tests))
    stale = sorted(name for name in whitelist if name not in still_dead)
    return dead, stale


def report(dead: list[tuple[PublicFunction, bool]], stale: list[str], root: Path = ROOT) -> str:
    lines: list[str] = []
    if dead:
        lines.append(f"{len(dead)} public function(s) of a domain package have no caller in src/fathom:")
        for fn, tested in dead:
            where = f"{fn.path.relative_to(root)}:{fn.line}"
            users = "only tests use it" if tested else "nothing uses it"
            lines.append(f"  {fn.qualname}  ({where}; {users})")
        lines += [
            "",
            "For each one, do one of:",
            "  - call it from a product path (a route, a node, the worker, the CLI) so users reach the rule;",
            "  - delete it, and the tests that only test it (a helper only tests need belongs in tests/);",
            "  - only if it must stay without a caller (a library entry point, a conformance kit), add a",
            f"    line '<dotted.name>  # <why>' to {WHITELIST.relative_to(ROOT)}.",
            "Then run `python scripts/check_dead_code.py` again (make test runs it).",
        ]
    if stale:
        if lines:
            lines.append("")
        lines.append(f"Whitelist lines in {WHITELIST.relative_to(ROOT)} whose function is now used or gone:")
        lines += [f"  {name}" for name in stale]
        lines.append("Delete those lines (the whitelist lists only functions that still need it).")
    return "\n".join(lines)


def main() -> int:
    dead, stale = find_dead()
    if dead or stale:
        print(report(dead, stale), file=sys.stderr)
        return 1
    kept = len(load_whitelist())
    packages = ",".join(PACKAGES)
    print(f"no dead rooms: every public function of fathom.{{{packages}}} has a caller ({kept} whitelisted)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
