"""The dead-code check of ``make test`` (scripts/check_dead_code.py): a public function, class or method
that only tests call fails, and so does a public function read only in its own module, with a message
saying what to do; callers are resolved through imports; the repository itself passes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_dead_code.py"


def load_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_dead_code", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_dead_code"] = module
    spec.loader.exec_module(module)
    return module


RULES = """
def used(x):
    return x


def only_tested(x):
    return only_tested(x - 1) if x else 0  # calling itself is no caller


def unused():
    return 1


def helper():
    return 3


def uses_helper():
    return helper()


@register_node("x")
def registered():
    return 2


@cache
def cached_but_unused():
    return 4


class Store:
    def save(self):
        return self.check()

    def check(self):
        return True

    def never_called(self):
        return None
"""

OTHER = """
def used(x):  # same name as rules.used, but nobody imports this one
    return x
"""


def make_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_callers_are_resolved_through_imports_methods_included(tmp_path: Path) -> None:
    check = load_check()
    make_tree(
        tmp_path,
        {
            "src/fathom/__init__.py": "",
            "src/fathom/tools/rules.py": RULES,
            "src/fathom/tools/other.py": OTHER,
            "src/fathom/tools/__init__.py": "from fathom.tools.rules import only_tested, used\n",
            "src/fathom/server/route.py": (
                "from fathom.tools import rules\nfrom fathom.tools.rules import Store, uses_helper\n\n"
                "rules.used(1)\nuses_helper()\nStore().save()\n"
            ),
            "tests/test_rules.py": "from fathom.tools.rules import only_tested\n\nonly_tested(2)\n",
        },
    )
    whitelist = tmp_path / "whitelist.txt"
    whitelist.write_text("fathom.tools.rules.unused  # kept on purpose\nfathom.tools.rules.used  # stale\n")
    found, stale = check.find_dead(tmp_path / "src", tmp_path / "tests", whitelist)
    assert sorted((f.definition.qualname, f.kind, f.tested) for f in found) == [
        ("fathom.tools.other.used", "dead", False),  # sharing a name with a used function is no alibi
        ("fathom.tools.rules.Store.never_called", "dead", False),
        ("fathom.tools.rules.cached_but_unused", "dead", False),  # a decorator that registers nothing
        ("fathom.tools.rules.helper", "private", False),  # read only in its own module
        ("fathom.tools.rules.only_tested", "dead", True),
    ]
    assert stale == ["fathom.tools.rules.used"]  # called, so its allowlist line must go
    message = check.report(found, stale, tmp_path)
    where = "src/fathom/tools/rules.py:6"
    assert f"fathom.tools.rules.only_tested  (function, {where}; only tests use it)" in message
    assert "call it from a product path" in message and "delete it" in message
    assert "Rename each with a leading '_'" in message
    assert "Delete those lines" in message


def test_a_whitelist_line_without_a_reason_is_refused(tmp_path: Path) -> None:
    check = load_check()
    whitelist = tmp_path / "whitelist.txt"
    whitelist.write_text("fathom.tools.rules.unused\n")
    try:
        check.load_whitelist(whitelist)
    except SystemExit as exc:
        assert "needs a reason" in str(exc)
    else:
        raise AssertionError("a line without a reason was accepted")


def test_the_repository_has_no_dead_rooms() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
