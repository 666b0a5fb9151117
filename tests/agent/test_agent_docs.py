"""docs/agents.md's example runs as written and prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).parents[2] / "docs" / "agents.md"


def test_runnable_example_prints_its_commented_output() -> None:
    code = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert code is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), str(DOC), "exec"), {"__name__": "agents_doc_example"})
    lines = out.getvalue().strip().splitlines()
    assert lines[0] == "done | 2 + 3 = 5"
    assert lines[1] == "['llm_request_start', 'plan_status', 'tool_call']"
    assert lines[2] == "3 " + str(["account_usage:agent_call"] * 3)
    assert lines[3] == "done"
