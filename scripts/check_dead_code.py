"""No dead rooms: fail when a public function, class or method of Fathom has no caller outside the tests,
or when a public name is read only in its own module (it is a private helper: give it a ``_``).

DESIGN.md §2: "every public function of a domain package has a caller on a product path (a route, a
node, the worker, the CLI). A rule that only a test reaches does not exist for the user."

What is checked: every module under ``src/fathom`` (Alembic's migration scripts aside: Alembic calls
them by convention; private modules such as the sandbox's ``_pyrunner.py`` aside: their names are private
already). In ``fathom.testing``, a library for tests, a test's read counts as a caller. Definitions:
module-level ``def`` / ``class`` and the methods of those classes whose names do not start with ``_``.

How a caller is found — by module and name, through imports:

* each module's imports are resolved (``from fathom.tools import error_text`` follows the package's
  re-export to ``fathom.tools.errors.error_text``; ``import fathom.llm as llm`` then ``llm.count_tokens``
  names ``fathom.llm``'s ``count_tokens``), so two functions that share a name are told apart;
* a method is called when the receiver is known — ``self.m`` / ``cls.m`` inside its class (or a
  subclass), ``Class.m``, a local ``x = Class(...)`` or a parameter ``x: Class`` — and, best effort,
  when an attribute ``.m`` is read on a receiver the check cannot type (``self.repo.m``), any method
  named ``m`` counts as called; a subclass's override is called when the base method is;
* a string ``"fathom.module:name"`` or ``"fathom.module.name"`` (an entry point, a uvicorn factory)
  and the ``[project.scripts]`` of pyproject.toml count as callers;
* what does not count: the definition's own body, ``import`` lines and ``__all__`` (re-exporting a name
  calls nothing), and tests.

Decorators are treated by name: one that registers the function with a framework that calls it
(``register_node``, FastAPI's ``get`` / ``post`` / … / ``exception_handler``, Typer's ``command`` /
``callback``, pytest's ``fixture``, pydantic's validators and serializers) makes it reached; any other
decorator (``property``, ``cache``, ``contextmanager`` …) changes nothing. Methods that override a
third-party base class's method (``httpx.AsyncBaseTransport.handle_async_request``, ``logging.Filter.filter``)
are called by that library, and the methods of a ``Protocol`` declare an interface: neither is checked.

Two findings:

* **dead** — no caller in ``src/fathom``: call it from a product path, delete it, or (rarely) list it;
* **private** — a module-level function read only in its own module: rename it with a ``_`` (classes
  are left alone: a result or error type read only where it is made is still part of its callers' API).

Usage: ``python scripts/check_dead_code.py`` (run by ``make test``). Exit code 1 lists each finding
and what to do; allowlist lines (``scripts/dead_code_whitelist.txt``, each with its reason) whose
finding is gone fail too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
TESTS = ROOT / "tests"
WHITELIST = ROOT / "scripts" / "dead_code_whitelist.txt"
SKIPPED_FOLDERS = ("fathom/store/migrations",)
# Packages that are libraries for tests (the scripted model server a user's tests run against, docs/
# testing): their callers are tests, so a test's read counts as a caller there.
LIBRARY_PACKAGES = ("fathom.testing",)

# Decorators (their last name: ``router.post(...)`` → ``post``) that hand the function to a framework
# which calls it: the function is reached. Every other decorator is transparent.
REGISTERING_DECORATORS = frozenset(
    {
        "register_node",
        "get",
        "post",
        "put",
        "patch",
        "delete",
        "head",
        "options",
        "api_route",
        "websocket",
        "exception_handler",
        "middleware",
        "on_event",
        "command",
        "callback",
        "fixture",
        "field_validator",
        "model_validator",
        "validator",
        "root_validator",
        "field_serializer",
        "model_serializer",
        "computed_field",
        "overload",
        "_tag_route",  # server/routes/dataset_tags.py: api_route under /api/core/… and /api/proApi/…
    }
)
_FATHOM_REFERENCE = re.compile(r"^fathom(?:\.\w+)+(?::\w+)?$")


@dataclass
class Definition:
    """One checked definition: ``module.name`` or ``module.Class.method``."""

    qualname: str
    module: str
    name: str
    kind: str  # "function", "class" or "method"
    path: Path
    line: int
    end_line: int
    owner: str | None = None  # the class of a method
    exempt: bool = False
    bases: list[str] = field(default_factory=list)  # a class's resolved fathom bases
    external_bases: list[tuple[str, str]] = field(default_factory=list)  # (module, name) of others


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    tree: ast.Module
    bindings: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # local → (module, name)
    star_imports: list[str] = field(default_factory=list)


def _python_files(folder: Path) -> Iterator[Path]:
    yield from sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(path: Path, src: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(src).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Name):
        return target.id
    return ""


class Index:
    """Every module of a tree, its import bindings and its checked definitions."""

    def __init__(self, src: Path) -> None:
        self.src = src
        self.modules: dict[str, Module] = {}
        for path in _python_files(src / "fathom"):
            name, is_package = _module_name(path, src)
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            self.modules[name] = Module(name, path, is_package, tree)
        for module in self.modules.values():
            self.bind(module, module.tree)
        self.definitions: dict[str, Definition] = {}
        self.methods_by_name: dict[str, list[Definition]] = {}
        for module in self.modules.values():
            if any(part in module.path.as_posix() for part in SKIPPED_FOLDERS):
                continue
            if any(part.startswith("_") and not part.startswith("__") for part in module.name.split(".")):
                continue  # a private module (the sandbox's in-process scripts): its names are private already
            self._define(module)
        for definition in self.definitions.values():
            if definition.kind == "class":
                self._resolve_bases(definition)

    def bind(self, module: Module, tree: ast.AST) -> None:
        """Record what every import in ``tree`` binds (imports anywhere: a local import binds too)."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        module.bindings[alias.asname] = (alias.name, None)
                    else:
                        top = alias.name.split(".")[0]
                        module.bindings.setdefault(top, (top, None))
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(module.name, module.is_package, node)
                for alias in node.names:
                    if alias.name == "*":
                        module.star_imports.append(source)
                        continue
                    submodule = f"{source}.{alias.name}"
                    if submodule in self.modules:
                        module.bindings[alias.asname or alias.name] = (submodule, None)
                    else:
                        module.bindings[alias.asname or alias.name] = (source, alias.name)

    def _define(self, module: Module) -> None:
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                self._add(module, node, owner=None)
                if isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                            self._add(module, item, owner=f"{module.name}.{node.name}")

    def _add(
        self, module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, owner: str | None
    ) -> None:
        if node.name.startswith("_"):
            return
        kind = "class" if isinstance(node, ast.ClassDef) else "method" if owner else "function"
        qualname = f"{owner or module.name}.{node.name}"
        exempt = any(_decorator_name(d) in REGISTERING_DECORATORS for d in node.decorator_list)
        definition = Definition(
            qualname,
            module.name,
            node.name,
            kind,
            module.path,
            node.lineno,
            node.end_lineno or node.lineno,
            owner,
            exempt,
        )
        self.definitions[qualname] = definition
        if kind == "method":
            self.methods_by_name.setdefault(node.name, []).append(definition)

    def _class_node(self, definition: Definition) -> ast.ClassDef:
        module = self.modules[definition.module]
        for node in module.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == definition.name:
                return node
        raise LookupError(definition.qualname)

    def _resolve_bases(self, definition: Definition) -> None:
        module = self.modules[definition.module]
        for base in self._class_node(definition).bases:
            target = base.value if isinstance(base, ast.Subscript) else base
            resolved = self.resolve_expression(module, target)
            if resolved is None:
                continue
            kind, value = resolved
            if kind == "definition" and value in self.definitions:
                definition.bases.append(value)
            elif kind == "external":
                source, _, name = value.rpartition(".")
                definition.external_bases.append((source, name))

    # -- resolution -------------------------------------------------------------------------------

    def resolve_name(self, module_name: str, name: str, depth: int = 0) -> tuple[str, str] | None:
        """``name`` as seen in ``module_name``: ("definition", qualname), ("module", dotted) or
        ("external", dotted) — following imports and re-exports; None when unknown (a local)."""
        if depth > 20:
            return None
        qualname = f"{module_name}.{name}"
        if qualname in self.definitions:
            return ("definition", qualname)
        module = self.modules.get(module_name)
        if module is None:
            return None
        if qualname in self.modules and module.is_package:
            return ("module", qualname)
        binding = module.bindings.get(name)
        if binding is not None:
            source, imported = binding
            if imported is None:
                return ("module", source) if source in self.modules else ("external", source)
            if source in self.modules:
                found = self.resolve_name(source, imported, depth + 1)
                if found is not None:
                    return found
                return ("definition", f"{source}.{imported}")  # a constant or something unchecked
            return ("external", f"{source}.{imported}")
        for source in module.star_imports:
            found = self.resolve_name(source, name, depth + 1)
            if found is not None:
                return found
        return None

    def resolve_expression(self, module: Module, node: ast.expr) -> tuple[str, str] | None:
        if isinstance(node, ast.Name):
            return self.resolve_name(module.name, node.id)
        if isinstance(node, ast.Attribute):
            inner = self.resolve_expression(module, node.value)
            if inner is None:
                return None
            kind, value = inner
            if kind == "module":
                submodule = f"{value}.{node.attr}"
                if submodule in self.modules:
                    return ("module", submodule)
                return self.resolve_name(value, node.attr) or ("definition", f"{value}.{node.attr}")
            if kind == "external":
                return ("external", f"{value}.{node.attr}")
            if kind == "definition" and value in self.definitions and self.definitions[value].kind == "class":
                method = self.method_of(value, node.attr)
                return ("definition", method) if method else None
        return None

    def method_of(self, class_qualname: str, name: str) -> str | None:
        """``Class.name`` through the class's fathom bases (None when no known class defines it)."""
        seen: set[str] = set()
        queue = [class_qualname]
        while queue:
            current = queue.pop(0)
            if current in seen:
                continue
            seen.add(current)
            if f"{current}.{name}" in self.definitions:
                return f"{current}.{name}"
            definition = self.definitions.get(current)
            if definition is not None:
                queue.extend(definition.bases)
        return None


@dataclass
class References:
    """Where each definition is read: qualname → set of (file, line); and method names read untyped."""

    precise: dict[str, set[tuple[Path, int]]] = field(default_factory=dict)
    loose_methods: dict[str, set[tuple[Path, int]]] = field(default_factory=dict)

    def add(self, qualname: str, path: Path, line: int) -> None:
        self.precise.setdefault(qualname, set()).add((path, line))


class _Collector(ast.NodeVisitor):
    """Reads one file's references, resolving each through the file's imports."""

    def __init__(self, index: Index, module: Module, refs: References) -> None:
        self.index = index
        self.module = module
        self.refs = refs
        self.class_stack: list[str] = []
        self.locals: list[dict[str, str]] = [{}]  # variable → class qualname, per function

    # skip what is not a use
    def visit_Import(self, node: ast.Import) -> None:
        return

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        if (
            len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call)
        ):
            cls = self._class_of(node.value.func)
            if cls is not None:
                self.locals[-1][node.targets[0].id] = cls
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name):
            cls = self._class_of(node.annotation)
            if cls is not None:
                self.locals[-1][node.target.id] = cls
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        owner = f"{self.module.name}.{node.name}" if not self.class_stack else None
        self.class_stack.append(owner or "")
        self.generic_visit(node)
        self.class_stack.pop()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        scope: dict[str, str] = {}
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            if arg.annotation is not None:
                cls = self._class_of(arg.annotation)
                if cls is not None:
                    scope[arg.arg] = cls
        if self.class_stack and self.class_stack[-1]:
            scope.setdefault("self", self.class_stack[-1])
            scope.setdefault("cls", self.class_stack[-1])
        self.locals.append(scope)
        self.generic_visit(node)
        self.locals.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _class_of(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(node, ast.BinOp):  # X | None
            return self._class_of(node.left) or self._class_of(node.right)
        resolved = (
            self.index.resolve_expression(self.module, node)
            if isinstance(node, ast.Name | ast.Attribute)
            else None
        )
        if resolved and resolved[0] == "definition":
            definition = self.index.definitions.get(resolved[1])
            if definition is not None and definition.kind == "class":
                return definition.qualname
        return None

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            resolved = self.index.resolve_name(self.module.name, node.id)
            if resolved and resolved[0] == "definition":
                self.refs.add(resolved[1], self.module.path, node.lineno)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        resolved: tuple[str, str] | None = None
        if isinstance(node.value, ast.Name):
            variable = self._variable(node.value.id)
            if variable is not None:
                method = self.index.method_of(variable, node.attr)
                resolved = ("definition", method) if method else None
                if method is None:
                    self.refs.loose_methods.setdefault(node.attr, set()).add((self.module.path, node.lineno))
                self.generic_visit(node)
                if resolved:
                    self.refs.add(resolved[1], self.module.path, node.lineno)
                return
        resolved = self.index.resolve_expression(self.module, node)
        if resolved and resolved[0] == "definition":
            self.refs.add(resolved[1], self.module.path, node.lineno)
        elif resolved is None:
            inner = self.index.resolve_expression(self.module, node.value)
            if inner is None or inner[0] not in ("module", "external"):
                self.refs.loose_methods.setdefault(node.attr, set()).add((self.module.path, node.lineno))
        self.generic_visit(node)

    def _variable(self, name: str) -> str | None:
        for scope in reversed(self.locals):
            if name in scope:
                return scope[name]
        return None

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and _FATHOM_REFERENCE.match(node.value):
            target, _, attr = node.value.replace(":", ".").rpartition(".")
            resolved = self.index.resolve_name(target, attr) if target in self.index.modules else None
            if resolved and resolved[0] == "definition":
                self.refs.add(resolved[1], self.module.path, node.lineno)


def collect_references(index: Index, folder: Path) -> References:
    """References from every ``.py`` file under ``folder`` (``src/fathom`` or ``tests``)."""
    refs = References()
    for path in _python_files(folder):
        try:
            relative = path.relative_to(index.src)
            name, is_package = _module_name(path, index.src)
            module = index.modules.get(name)
        except ValueError:
            module = None
        if module is None:  # a test file: its own imports, resolved against the source index
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            module = Module(f"<tests>.{path.relative_to(folder).with_suffix('')}", path, False, tree)
            index.bind(module, tree)
            index.modules[module.name] = module
            try:
                _Collector(index, module, refs).visit(module.tree)
            finally:
                del index.modules[module.name]
            continue
        del relative, is_package
        _Collector(index, module, refs).visit(module.tree)
    return refs


def _overrides_external(index: Index, definition: Definition) -> bool:
    owner = index.definitions.get(definition.owner or "")
    if owner is None:
        return False
    pending = [owner]
    seen: set[str] = set()
    while pending:
        current = pending.pop()
        if current.qualname in seen:
            continue
        seen.add(current.qualname)
        for source, name in current.external_bases:
            if name in ("Protocol",) and source in ("typing", "typing_extensions"):
                return True  # an interface declaration
            try:
                base = getattr(importlib.import_module(source), name)
            except (ImportError, AttributeError):
                return True  # cannot tell: assume the library calls it
            if hasattr(base, definition.name):
                return True
        pending.extend(index.definitions[b] for b in current.bases if b in index.definitions)
    return False


@dataclass(frozen=True)
class Finding:
    """A definition with no caller (``dead``) or read only in its own module (``private``)."""

    definition: Definition
    kind: str
    tested: bool = False


def _outside(definition: Definition, uses: set[tuple[Path, int]]) -> set[tuple[Path, int]]:
    return {
        (path, line)
        for path, line in uses
        if not (path == definition.path and definition.line <= line <= definition.end_line)
    }


def _uses(index: Index, refs: References, definition: Definition) -> set[tuple[Path, int]]:
    uses = set(refs.precise.get(definition.qualname, set()))
    if definition.kind == "method":
        uses |= refs.loose_methods.get(definition.name, set())
        owner = index.definitions.get(definition.owner or "")
        for base in owner.bases if owner else []:  # an override is called when the base method is
            method = index.method_of(base, definition.name)
            if method:
                uses |= refs.precise.get(method, set())
    return _outside(definition, uses)


def find_findings(src: Path = SRC, tests: Path = TESTS, project: Path = ROOT) -> list[Finding]:
    """Every dead or should-be-private definition of the tree, in file order."""
    index = Index(src)
    in_src = collect_references(index, src / "fathom")
    in_tests = collect_references(index, tests) if tests.exists() else References()
    pyproject = project / "pyproject.toml"
    if pyproject.exists():
        scripts = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("scripts", {})
        for target in scripts.values():
            module, _, name = str(target).partition(":")
            resolved = index.resolve_name(module, name)
            if resolved and resolved[0] == "definition":
                in_src.add(resolved[1], pyproject, 0)
    findings: list[Finding] = []
    for definition in index.definitions.values():
        if definition.exempt:
            continue
        if definition.kind == "method" and _overrides_external(index, definition):
            continue
        uses = _uses(index, in_src, definition)
        if definition.module.startswith(LIBRARY_PACKAGES):
            uses |= _uses(index, in_tests, definition)
        if not uses:
            tested = bool(_uses(index, in_tests, definition))
            findings.append(Finding(definition, "dead", tested))
        elif definition.kind == "function" and all(path == definition.path for path, _ in uses):
            findings.append(Finding(definition, "private"))
    return findings


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
) -> tuple[list[Finding], list[str]]:
    """(findings not on the allowlist, stale allowlist names)."""
    findings = find_findings(src, tests, src.parent)
    whitelist = load_whitelist(whitelist_path)
    open_findings = [f for f in findings if f.definition.qualname not in whitelist]
    found = {f.definition.qualname for f in findings}
    stale = sorted(name for name in whitelist if name not in found)
    return open_findings, stale


def report(findings: list[Finding], stale: list[str], root: Path = ROOT) -> str:
    lines: list[str] = []
    dead = [f for f in findings if f.kind == "dead"]
    private = [f for f in findings if f.kind == "private"]
    if dead:
        lines.append(f"{len(dead)} public definition(s) have no caller in src/fathom:")
        for finding in dead:
            fn = finding.definition
            where = f"{fn.path.relative_to(root)}:{fn.line}"
            users = "only tests use it" if finding.tested else "nothing uses it"
            lines.append(f"  {fn.qualname}  ({fn.kind}, {where}; {users})")
        lines += [
            "",
            "For each one, do one of:",
            "  - call it from a product path (a route, a node, the worker, the CLI) so users reach the rule;",
            "  - delete it, and the tests that only test it (a helper only tests need belongs in tests/);",
            "  - only if it must stay without a caller (a library entry point, a conformance kit), add a",
            f"    line '<dotted.name>  # <why>' to {WHITELIST.relative_to(ROOT)}.",
        ]
    if private:
        if lines:
            lines.append("")
        lines.append(f"{len(private)} public name(s) are read only in their own module:")
        for finding in private:
            fn = finding.definition
            lines.append(f"  {fn.qualname}  ({fn.kind}, {fn.path.relative_to(root)}:{fn.line})")
        lines.append(
            "Rename each with a leading '_' (a private helper of its module), or use it from another module."
        )
    if dead or private:
        lines.append("Then run `python scripts/check_dead_code.py` again (make test runs it).")
    if stale:
        if lines:
            lines.append("")
        lines.append(f"Allowlist lines in {WHITELIST.relative_to(ROOT)} whose finding is gone:")
        lines += [f"  {name}" for name in stale]
        lines.append("Delete those lines (the allowlist lists only findings that still need it).")
    return "\n".join(lines)


def main() -> int:
    findings, stale = find_dead()
    if findings or stale:
        print(report(findings, stale), file=sys.stderr)
        return 1
    kept = len(load_whitelist())
    print(
        f"no dead rooms: every public function, class and method of src/fathom has a caller ({kept} listed)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
