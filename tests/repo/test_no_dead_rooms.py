"""The dead-code check of ``make test`` (scripts/check_dead_code.py): a public function of a domain package
that only tests call fails, with a message saying what to do; the repository itself passes."""

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


@register
def registered():
    return 2
"""


def make_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_function_only_tests_call_is_reported_with_what_to_do(tmp_path: Path) -> None:
    check = load_check()
    make_tree(
        tmp_path,
        {
            "src/fathom/tools/rules.py": RULES,
            "src/fathom/tools/__init__.py": "from fathom.tools.rules import only_tested, used\n",
            "src/fathom/server/route.py": "from fathom.tools import rules\n\nrules.used(1)\n",
            "tests/test_rules.py": "from fathom.tools.rules import only_tested\n\nonly_tested(2)\n",
        },
    )
    whitelist = tmp_path / "whitelist.txt"
    whitelist.write_text("fathom.tools.rules.unused  # kept on purpose\nfathom.tools.rules.used  # stale\n")
    dead, stale = check.find_dead(tmp_path / "src", tmp_path / "tests", whitelist)
    assert [(fn.qualname, tested) for fn, tested in dead] == [("fathom.tools.rules.only_tested", True)]
    assert stale == ["fathom.tools.rules.used"]  # called, so its whitelist line must go
    message = check.report(dead, stale, tmp_path)
    assert "fathom.tools.rules.only_tested  (src/fathom/tools/rules.py:6; only tests use it)" in message
    assert "call it from a product path" in message and "delete it" in message
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
