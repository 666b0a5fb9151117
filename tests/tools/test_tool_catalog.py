"""Tool catalog (seed 004): ids, bind, model_tools of active tools, invoke with authorize once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from fathom.tools import (
    ToolContext,
    ToolDefinition,
    ToolInputError,
    ToolNotFoundError,
    ToolOutputError,
    define_tool_catalog,
    function_tool,
)


@dataclass
class App:
    allowed: bool = True
    admin: bool = False
    status: str = "running"
    log: list[str] = field(default_factory=list)


def empty_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or value:
        raise TypeError("expected an empty object")
    return {}


def authorize(input: Any, ctx: ToolContext) -> None:
    ctx.app.log.append("authorize")
    if not ctx.app.allowed:
        raise PermissionError("no read permission for this request")


def execute(input: Any, ctx: ToolContext) -> Any:
    ctx.app.log.append("execute")
    return ctx.app.status


def parse_output(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value


STATUS = {
    "id": "get_status",
    "kind": "read",
    "description": "Read the service status",
    "inputSchema": {
        "jsonSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "parse": empty_object,
    },
    "authorize": authorize,
    "execute": execute,
    "parseOutput": parse_output,
}


@function_tool(kind="admin", active=lambda app: app.admin)
def restart(reason: str) -> str:
    """Restart the service."""
    return f"restarted: {reason}"


def catalog() -> Any:
    return define_tool_catalog([STATUS, restart])


def test_ids_in_declaration_order() -> None:
    assert catalog().ids() == ["get_status", "restart"]


def test_duplicate_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="Duplicate tool id: get_status"):
        define_tool_catalog([STATUS, STATUS])


def test_model_tools_lists_only_active_tools_in_order() -> None:
    tools = catalog().bind(app=App()).model_tools()
    assert [t["function"]["name"] for t in tools] == ["get_status"]
    assert tools[0] == {
        "type": "function",
        "function": {
            "name": "get_status",
            "description": "Read the service status",
            "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
        },
    }
    admin_tools = catalog().bind(app=App(admin=True)).model_tools()
    assert [t["function"]["name"] for t in admin_tools] == ["get_status", "restart"]


async def test_invoke_authorizes_once_then_executes_and_validates_output() -> None:
    app = App()
    result = await catalog().bind(app=app).invoke("get_status", {})
    assert result.value == "running"
    assert app.log == ["authorize", "execute"]


async def test_refused_authorization_never_executes() -> None:
    app = App(allowed=False)
    with pytest.raises(PermissionError, match="no read permission"):
        await catalog().bind(app=app).invoke("get_status", {})
    assert app.log == ["authorize"]


async def test_invalid_input_is_rejected_before_authorize() -> None:
    app = App()
    with pytest.raises(ToolInputError, match="expected an empty object"):
        await catalog().bind(app=app).invoke("get_status", {"x": 1})
    assert app.log == []


async def test_an_output_parse_output_rejects_is_raised_as_tool_output_error() -> None:
    app = App(status=42)  # type: ignore[arg-type]
    with pytest.raises(ToolOutputError, match="expected a string") as raised:
        await catalog().bind(app=app).invoke("get_status", {})
    assert isinstance(raised.value.__cause__, TypeError)


async def test_inactive_or_unknown_tools_cannot_be_invoked() -> None:
    bound = catalog().bind(app=App())
    with pytest.raises(ToolNotFoundError, match="Call tool not found: restart"):
        await bound.invoke("restart", {"reason": "x"})
    with pytest.raises(ToolNotFoundError):
        await bound.invoke("nope", {})
    admin = catalog().bind(app=App(admin=True))
    assert (await admin.invoke("restart", {"reason": "deploy"})).value == "restarted: deploy"


async def test_run_is_the_model_facing_path_and_never_raises() -> None:
    denied = catalog().bind(app=App(allowed=False))
    call = {"id": "1", "type": "function", "function": {"name": "get_status", "arguments": "{}"}}
    result = await denied.run(call)
    assert result.response == "Tool error: no read permission for this request"

    hidden = {"id": "2", "type": "function", "function": {"name": "restart", "arguments": '{"reason":"x"}'}}
    assert (await denied.run(hidden)).response == "Call tool not found: restart"

    ok = await catalog().bind(app=App()).run(call)
    assert ok.response == "running"


async def test_async_authorize_and_execute_with_bound_signal() -> None:
    events: list[str] = []

    async def auth(input: Any, ctx: ToolContext) -> None:
        events.append(f"auth signal={ctx.signal.is_set()}")

    async def run(ctx: ToolContext) -> str:
        events.append("run")
        return "done"

    tool = ToolDefinition(name="job", execute=run, authorize=auth)
    bound = define_tool_catalog([tool]).bind(app=None)
    assert (await bound.invoke("job")).value == "done"
    assert events == ["auth signal=False", "run"]
