"""FastGPT's system tools as one seed-004 catalog: input checked before anything runs, authorize before
execute, and an output without exactly the declared keys raised as ToolOutputError."""

from __future__ import annotations

import pytest

from fathom.tools import ToolInputError, ToolOutputError
from fathom.workflow.nodes.system_tools import SYSTEM_TOOL_CATALOG, SYSTEM_TOOLS


def test_the_catalog_holds_every_system_tool_in_order() -> None:
    assert SYSTEM_TOOL_CATALOG.ids() == list(SYSTEM_TOOLS)


async def test_invoke_runs_a_tool_and_checks_its_output() -> None:
    bound = SYSTEM_TOOL_CATALOG.bind(app=None)
    assert (await bound.invoke("mathExprVal", {"expr": "(2 + 3) * 4"})).value == {"result": 20}
    with pytest.raises(ToolInputError):
        await bound.invoke("mathExprVal", "2 + 3")  # not an object


def test_an_output_without_the_declared_keys_is_a_tool_output_error() -> None:
    parse_output = SYSTEM_TOOL_CATALOG.get("getTime").parse_output
    assert parse_output is not None
    assert parse_output({"time": "2026-01-01 00:00:00"}) == {"time": "2026-01-01 00:00:00"}
    with pytest.raises(ToolOutputError, match=r"getTime returned \['when'\], expected \['time'\]"):
        parse_output({"when": "now"})
