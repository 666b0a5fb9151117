"""Count the test suite: collected tests and assert statements (issue #33: neither may go down).

Usage: ``python scripts/count_tests.py`` from the repository root (``PYTHONPATH=src`` when not installed).
Prints ``tests=<collected> asserts=<assert statements> files=<test files>``. Asserts are counted in the
source (every ``assert`` statement under ``tests/``, helpers included), tests by ``pytest --collect-only``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def count_asserts(tests_dir: Path) -> tuple[int, int]:
    asserts = 0
    files = 0
    for path in sorted(tests_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        asserts += sum(isinstance(node, ast.Assert) for node in ast.walk(tree))
        files += path.name.startswith("test_")
    return asserts, files


def count_collected(tests_dir: Path) -> int:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", str(tests_dir)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    match = re.search(r"(\d+) tests? collected", result.stdout) or re.search(
        r"^(\d+) tests?", result.stdout.splitlines()[-1] if result.stdout else "", re.M
    )
    if match is None:
        sys.stderr.write(result.stdout[-2000:] + result.stderr[-2000:])
        raise SystemExit("could not read the number of collected tests")
    return int(match.group(1))


def main() -> None:
    tests_dir = ROOT / "tests"
    asserts, files = count_asserts(tests_dir)
    print(f"tests={count_collected(tests_dir)} asserts={asserts} files={files}")


if __name__ == "__main__":
    main()
