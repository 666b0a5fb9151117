"""The runnable snippets of docs/tools.md (function tools, OpenAPI) keep working."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "tools.md"


def snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, ["Oslo: 21°C", "city: Field required", "['get_weather']", "Rome: 21°C"]),
        (1, ['{"path":"/api/pets/a%2F1?fields=name&fields=age","auth":"Bearer token-123"}']),
    ],
)
def test_doc_snippet_runs(index: int, expected: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = snippets()[index]
    exec(compile(code, f"{DOC.name}[{index}]", "exec"), {"__name__": "__docs__"})
    out = capsys.readouterr().out
    for text in expected:
        assert text in out
