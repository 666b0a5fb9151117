"""Tool Call node details: stopTool ends the loop, a tool branch that pauses (userSelect) resumes
inside the tool, usages and assistant responses, the Agent node's plan events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from wf_builders import answer, edge, node_input, output, start, workflow

from fathom.llm import ChatModel
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn
from fathom.workflow import ToolEvent, WorkflowEvent, WorkflowServices, resume_workflow, run_workflow


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAIServer]:
    async with ScriptedOpenAIServer() as scripted:
        yield scripted


def services(server: ScriptedOpenAIServer) -> WorkflowServices:
    def factory(model_id: str) -> ChatModel:
        return server.chat_model("m", input_price=1, output_price=1)

    return WorkflowServices(chat_model_factory=factory)


def tool_edge(source: str, target: str) -> dict[str, Any]:
    return {
        "source": source,
        "target": target,
        "sourceHandle": "selectedTools",
        "targetHandle": "selectedTools",
    }


def caller(node_id: str = "tc", flow_node_type: str = "tools") -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": "Caller",
        "flowNodeType": flow_node_type,
        "version": "481",
        "inputs": [
            node_input("model", "m"),
            node_input("history", 0, "chatHistory"),
            node_input("userChatInput", ["start", "userChatInput"]),
        ],
        "outputs": [output("answerText")],
    }


def tool_params(node_id: str, key: str) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": f"tool {node_id}",
        "flowNodeType": "toolParams",
        "toolDescription": f"Tool {node_id}",
        "version": "481",
        "inputs": [node_input(key, "", toolDescription=f"the {key}")],
        "outputs": [output(key)],
    }


async def test_reaching_stop_tool_ends_the_loop_without_another_model_request(
    server: ScriptedOpenAIServer,
) -> None:
    stop = {"nodeId": "stop", "name": "stop", "flowNodeType": "stopTool", "inputs": [], "outputs": []}
    graph = workflow(
        [start(), caller(), tool_params("finish", "summary"), stop, answer("out", "done")],
        [edge("start", "tc"), tool_edge("tc", "finish"), edge("finish", "stop"), edge("tc", "out")],
    )
    server.set_script([tool_call_turn([("finish", {"summary": "ok"})]), text_turn("never sent")])
    result = await run_workflow(graph, query="go", services=services(server))
    assert len(server.chat_requests) == 1
    assert result.run_node_ids == ["start", "tc", "out"]
    detail = result.flow_responses[1]["toolDetail"]
    assert [d["moduleType"] for d in detail] == ["toolParams", "stopTool"]
    assert detail[0]["toolParamsResult"] == {"summary": "ok"}


async def test_tool_branch_pause_resumes_inside_the_tool_and_the_loop_continues(
    server: ScriptedOpenAIServer,
) -> None:
    select = {
        "nodeId": "pick",
        "name": "pick",
        "flowNodeType": "userSelect",
        "toolDescription": "Ask the user to pick a size",
        "version": "481",
        "inputs": [
            node_input("description", "Which size?"),
            node_input(
                "userSelectOptions", [{"key": "s", "value": "Small"}, {"key": "l", "value": "Large"}], "any"
            ),
        ],
        "outputs": [output("selectResult")],
    }
    graph = workflow(
        [start(), caller(), select, answer("out", "<{{$tc.answerText$}}>")],
        [edge("start", "tc"), tool_edge("tc", "pick"), edge("tc", "out")],
    )
    server.set_script([tool_call_turn([("pick", {}, "call_p")])])
    paused = await run_workflow(graph, query="order", services=services(server))
    record = paused.interactive
    assert record is not None and record["type"] == "toolChildrenInteractive"
    assert record["entryNodeIds"] == ["tc"]
    assert record["params"]["toolParams"] == {"toolCallId": "call_p"}
    assert record["params"]["childrenResponse"]["type"] == "userSelect"
    assert paused.run_node_ids == ["start", "tc"]

    server.add_turns(text_turn("Large it is"))
    events: list[WorkflowEvent] = []
    resumed = await resume_workflow(graph, record, "Large", services=services(server), emit=events.append)
    assert resumed.interactive is None
    assert resumed.run_node_ids == ["tc", "out"]
    assert resumed.answer_text == "Large it is\n<Large it is>"
    tool_reply = [m for m in server.chat_requests[-1]["messages"] if m.get("role") == "tool"]
    assert [m["content"] for m in tool_reply] == ["Large"]
    assert [e.kind for e in events if isinstance(e, ToolEvent)] == ["toolResponse"]


async def test_tool_call_bills_model_calls_under_the_node_name_and_keeps_tool_cards(
    server: ScriptedOpenAIServer,
) -> None:
    graph = workflow(
        [start(), caller(), tool_params("lookup", "term")],
        [edge("start", "tc"), tool_edge("tc", "lookup")],
    )
    server.set_script([tool_call_turn([("lookup", {"term": "x"}, "c1")]), text_turn("found x")])
    result = await run_workflow(graph, query="find x", services=services(server))
    assert [u["moduleName"] for u in result.flow_usages] == ["Caller", "Caller"]
    response = result.flow_responses[1]
    assert response["totalPoints"] == pytest.approx(sum(u["totalPoints"] for u in result.flow_usages))
    assert response["totalPoints"] > 0
    kinds = [item["type"] for item in result.assistant_responses]
    assert kinds == ["tool", "text"]
    card = result.assistant_responses[0]["tools"][0]
    assert card["toolName"] == "tool lookup"
    assert card["functionName"] == "lookup"
    assert card["response"] == '{"term": "x"}'


async def test_tool_call_node_offers_no_plan_or_ask_but_the_agent_node_does(
    server: ScriptedOpenAIServer,
) -> None:
    for flow_node_type, expect_system in (("tools", False), ("agent", True)):
        server.clear()
        server.set_script([text_turn("hi")])
        graph = workflow([start(), caller("n", flow_node_type)], [edge("start", "n")])
        await run_workflow(graph, query="q", services=services(server))
        names = {t["function"]["name"] for t in server.chat_requests[0].get("tools") or []}
        if expect_system:
            assert {"set_plan", "ask_user"} <= names
        else:
            assert not names & {"set_plan", "ask_user"}


async def test_agent_plan_operations_become_plan_events_and_a_plan_response(
    server: ScriptedOpenAIServer,
) -> None:
    graph = workflow([start(), caller("ag", "agent")], [edge("start", "ag")])
    server.set_script(
        [
            tool_call_turn([("set_plan", {"name": "Trip", "steps": ["Book"]})]),
            text_turn("Planned"),  # the stop gate refuses: step_1 is still pending
            tool_call_turn([("update_plan", {"updates": [{"id": "step_1", "status": "done"}]})]),
            text_turn("Booked"),
        ]
    )
    events: list[WorkflowEvent] = []
    result = await run_workflow(graph, query="plan a trip", services=services(server), emit=events.append)
    kinds = [e.kind for e in events if isinstance(e, ToolEvent)]
    assert kinds == ["planStatus", "plan", "planStatus", "plan"]
    plan_items = [a for a in result.assistant_responses if a["type"] == "agentPlan"]
    assert plan_items[-1]["agentPlan"]["name"] == "Trip"
    assert plan_items[-1]["agentPlan"]["steps"][0]["status"] == "done"
    gate = [a for a in result.assistant_responses if a["type"] == "agentStopGate"]
    assert len(gate) == 1 and "step_1: Book (pending)" in gate[0]["agentStopGate"]["feedback"]
    assert len(server.chat_requests) == 4
    assert result.node_outputs["ag"]["answerText"] == "Booked"


async def test_agent_without_model_service_or_with_unknown_model_is_a_node_error() -> None:
    graph = workflow([start(), caller("ag", "agent")], [edge("start", "ag")])
    result = await run_workflow(graph, query="q")
    assert result.error == "The agent node needs a chat model service"


async def test_agent_offers_read_files_when_a_file_reader_is_injected(server: ScriptedOpenAIServer) -> None:
    class Reader:
        async def read_file(self, url: str) -> dict[str, str]:
            return {"name": "notes.txt", "text": f"content of {url}"}

    graph = workflow([start(), caller("ag", "agent")], [edge("start", "ag")])
    server.set_script(
        [
            tool_call_turn(
                [
                    ("read_files", {"urls": ["https://x.test/notes.txt"]}, "r1"),
                    ("read_files", {"urls": ["https://elsewhere.test/secret.txt"]}, "r2"),
                ]
            ),
            text_turn("read"),
        ]
    )
    base = services(server)
    with_reader = WorkflowServices(chat_model_factory=base.chat_model_factory, file_reader=Reader())
    query = [
        {"type": "file", "file": {"type": "file", "name": "notes.txt", "url": "https://x.test/notes.txt"}},
        {"type": "text", "text": {"content": "summarise"}},
    ]
    result = await run_workflow(graph, query=query, services=with_reader)
    assert "read_files" in {t["function"]["name"] for t in server.chat_requests[0]["tools"]}
    replies = {
        m["tool_call_id"]: m["content"] for m in server.chat_requests[1]["messages"] if m["role"] == "tool"
    }
    assert "File: notes.txt\n<Content>\ncontent of https://x.test/notes.txt\n</Content>" in replies["r1"]
    assert (
        replies["r2"] == "Tool error: File https://elsewhere.test/secret.txt is not part of this conversation"
    )
    assert result.node_outputs["ag"]["answerText"] == "read"


async def test_agent_offers_no_read_files_without_conversation_files(server: ScriptedOpenAIServer) -> None:
    class Reader:
        async def read_file(self, url: str) -> dict[str, str]:
            raise AssertionError("nothing to read")

    graph = workflow([start(), caller("ag", "agent")], [edge("start", "ag")])
    server.set_script([text_turn("nothing to read")])
    base = services(server)
    with_reader = WorkflowServices(chat_model_factory=base.chat_model_factory, file_reader=Reader())
    await run_workflow(graph, query="summarise", services=with_reader)
    assert "read_files" not in {t["function"]["name"] for t in server.chat_requests[0]["tools"]}
