"""Tool Call and Agent nodes over FastGPT-format fixtures (``fixtures/agent/*.json``): each step runs
or resumes the workflow against the scripted model server (real ``openai`` client, loopback) and
checks the answer, node order, outputs, the interactive record, tool messages and SSE events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fathom.llm import ChatModel
from fathom.testing import ScriptedOpenAIServer, Turn, text_turn, tool_call_turn
from fathom.workflow import ToolEvent, WorkflowEvent, WorkflowServices, resume_workflow, run_workflow

FIXTURE_DIR = Path(__file__).parent / "fixtures" / "agent"
SPECS = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(FIXTURE_DIR.glob("*.json"))}


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAIServer]:
    async with ScriptedOpenAIServer() as scripted:
        yield scripted


def services(server: ScriptedOpenAIServer) -> WorkflowServices:
    def factory(model_id: str) -> ChatModel:
        if model_id != "scripted-chat":
            raise LookupError(model_id)
        return server.chat_model(model_id, input_price=1, output_price=2)

    return WorkflowServices(chat_model_factory=factory)


def to_turn(raw: dict[str, Any]) -> Turn:
    if "tool_calls" in raw:
        return tool_call_turn([tuple(call) for call in raw["tool_calls"]])
    return text_turn(raw["text"])


def tool_messages(server: ScriptedOpenAIServer) -> dict[str, str]:
    last = server.chat_requests[-1]["messages"]
    return {m["tool_call_id"]: m["content"] for m in last if m.get("role") == "tool"}


def check(
    result: Any, events: list[WorkflowEvent], server: ScriptedOpenAIServer, expect: dict[str, Any]
) -> None:
    if "answer" in expect:
        assert result.answer_text == expect["answer"]
    assert result.run_node_ids == expect["run"]
    for node_id, values in expect.get("outputs", {}).items():
        for key, value in values.items():
            assert result.node_outputs[node_id][key] == value
    assert len(server.chat_requests) == expect["requests"]
    for call_id, text in expect.get("tool_messages", {}).items():
        assert text in tool_messages(server)[call_id]
    if "tool_names_offered" in expect:
        offered = [t["function"]["name"] for t in server.chat_requests[0]["tools"]]
        assert offered == expect["tool_names_offered"]
    tool_events = [e for e in events if isinstance(e, ToolEvent)]
    if "tool_events" in expect:
        assert [e.kind for e in tool_events if e.kind != "toolParams"] == expect["tool_events"]
    for call_id, args in expect.get("tool_params", {}).items():
        streamed = "".join(
            e.data["tool"]["params"]
            for e in tool_events
            if e.kind == "toolParams" and e.data["tool"]["id"] == call_id
        )
        assert json.loads(streamed) == args
        response = next(
            e for e in tool_events if e.kind == "toolResponse" and e.data["tool"]["id"] == call_id
        )
        assert json.loads(response.data["tool"]["params"]) == args
    wanted = expect.get("interactive")
    if wanted is None:
        assert result.interactive is None
        return
    record = result.interactive
    assert record["type"] == wanted["type"]
    assert record["askId"] == wanted["askId"]
    assert record["entryNodeIds"] == wanted["entryNodeIds"]
    assert record["params"]["description"] == wanted["description"]
    assert [q["question"] for q in record["params"]["questions"]] == wanted["questions"]
    assert json.loads(json.dumps(record)) == record  # storable as plain JSON


@pytest.mark.parametrize("name", sorted(SPECS))
async def test_agent_fixture(name: str, server: ScriptedOpenAIServer) -> None:
    spec = SPECS[name]
    record: dict[str, Any] | None = None
    for step in spec["steps"]:
        server.add_turns(*(to_turn(t) for t in step["turns"]))
        events: list[WorkflowEvent] = []
        if "resume" in step:
            assert record is not None
            result = await resume_workflow(
                spec["workflow"], record, step["resume"], services=services(server), emit=events.append
            )
        else:
            result = await run_workflow(
                spec["workflow"], query=step["query"], services=services(server), emit=events.append
            )
        check(result, events, server, step["expect"])
        record = result.interactive
