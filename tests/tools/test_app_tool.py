"""App-as-tool adapter: the protocol the workflow package implements, exercised with a real runner."""

from __future__ import annotations

import json
from typing import Any

from fathom.tools import run_tool
from fathom.tools.sources import AppRunner, AppRunRequest, AppRunResponse, app_tool


class RecordingRunner:
    """A real :class:`AppRunner` that answers from the request it receives."""

    def __init__(self) -> None:
        self.requests: list[AppRunRequest] = []

    async def run_app(self, request: AppRunRequest) -> AppRunResponse:
        self.requests.append(request)
        return AppRunResponse(
            text=f"child says: {request.params['userChatInput']}",
            usages=[{"moduleName": "Child app", "totalPoints": 1.5}],
            interactive={"type": "childrenInteractive"} if request.params.get("pause") else None,
        )


def call(args: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c9", "type": "function", "function": {"name": "ask_child", "arguments": json.dumps(args)}}


async def test_app_tool_runs_the_child_through_the_runner() -> None:
    runner = RecordingRunner()
    assert isinstance(runner, AppRunner)
    tool = app_tool("app-123", runner, name="ask_child", description="Ask the child app", version="v2")
    messages = [{"role": "user", "content": "hi"}]
    result = await run_tool(call({"userChatInput": "what is RRF?", "pause": True}), messages, [tool])
    assert result.response == "child says: what is RRF?"
    assert result.usages == [{"moduleName": "Child app", "totalPoints": 1.5}]
    assert result.interactive == {"type": "childrenInteractive"}
    assert result.metadata["appId"] == "app-123"
    [request] = runner.requests
    assert (request.app_id, request.version, request.call.id) == ("app-123", "v2", "c9")
    assert request.messages == messages


async def test_empty_input_is_refused_before_running() -> None:
    runner = RecordingRunner()
    tool = app_tool("app-1", runner, name="ask_child")
    result = await run_tool(call({"userChatInput": "  "}), [], [tool])
    assert result.response == "Tool error: Input is empty"
    missing = await run_tool(call({}), [], [tool])
    assert missing.response.startswith("Tool input validation failed: ")
    assert runner.requests == []
