"""The workflow Agent node is the seed-003 agent, through ``/api/v1/chat/completions`` with the scripted
model: the stop gate while planning, the prompt mode, the reminder, the sandbox and dataset-search system
tools, a context checkpoint stored with the answer and restored on the next turn of the same chat, and
the node's tokens and points counting only the agent calls (compression on its own usage line)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from chat_support import ChatServer, free_port, parse_sse, start_chat_server
from live_support import backend_database_url

from fathom.agent.system_prompt import AGENT_GUIDE, TOOL_GUIDES
from fathom.config import Settings
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn

TINY = "tiny-context"  # 1000-token window: a long question makes the loop checkpoint first


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def agent_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[ChatServer]:
    """A server per backend (the checkpoint is stored with the chat item and read back next turn)."""
    root = tmp_path_factory.mktemp("agent")
    database_url = backend_database_url(request, "agent")
    models = root / "models.yaml"
    models.write_text(
        "default_chat: scripted-chat\n"
        "models:\n"
        f"  - {{id: scripted-chat, type: llm, base_url: '{scripted.base_url}', max_retries: 0,"
        " input_price: 1, output_price: 2}\n"
        f"  - {{id: {TINY}, type: llm, base_url: '{scripted.base_url}', max_retries: 0,"
        " max_context: 1000, max_response: 200, input_price: 1, output_price: 2}\n",
        encoding="utf-8",
    )
    settings = Settings(
        data_dir=root / "data",
        port=free_port(),
        workers=1,  # ingests the knowledge base dataset_search reads
        models_file=models,
        egress_allow_cidrs=["127.0.0.1/32"],
        database_url=database_url,
    )
    yield from start_chat_server(settings, scripted, run_workers=True)


START = {
    "nodeId": "start",
    "name": "start",
    "flowNodeType": "workflowStart",
    "inputs": [],
    "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string"}],
}


def agent_node(flow_node_type: str = "agent", model: str = "scripted-chat", **inputs: Any) -> dict[str, Any]:
    values = {
        "model": model,
        "systemPrompt": "Answer in English.",
        "history": 6,
        "userChatInput": ["start", "userChatInput"],
        **inputs,
    }
    return {
        "nodeId": "ag",
        "name": "Helper",
        "flowNodeType": flow_node_type,
        "inputs": [{"key": key, "value": value} for key, value in values.items()],
        "outputs": [{"id": "answerText", "key": "answerText", "valueType": "string"}],
    }


def agent_app(server: ChatServer, node: dict[str, Any]) -> str:
    edge = {
        "source": "start",
        "target": "ag",
        "sourceHandle": "start-source-right",
        "targetHandle": "ag-target-left",
    }
    body = {"name": "Agent", "type": "advanced", "nodes": [START, node], "edges": [edge], "chatConfig": {}}
    return server.create_app(body)


def ask(server: ChatServer, app_id: str, text: str, **extra: Any) -> Any:
    body = {"appId": app_id, "detail": True, "messages": [{"role": "user", "content": text}], **extra}
    with server.client() as client:
        response = client.post("/api/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response if extra.get("stream") else response.json()


def node_detail(reply: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in reply["responseData"] if r.get("nodeId") == "ag")


def tool_replies(request: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def test_a_plan_with_pending_steps_does_not_finish_the_stop_gate_sends_the_agent_back(
    agent_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = agent_app(agent_server, agent_node())
    scripted.clear()
    scripted.set_script(
        [
            tool_call_turn([("set_plan", {"name": "Trip", "steps": ["Book a hotel"]})]),
            text_turn("All set."),
            tool_call_turn([("update_plan", {"updates": [{"id": "step_1", "status": "done"}]})]),
            text_turn("Hotel booked."),
        ]
    )
    response = ask(agent_server, app_id, "book my trip", stream=True, chatId="gate-chat")
    frames = parse_sse(response.text)
    assert len(scripted.chat_requests) == 4
    gated = scripted.chat_requests[2]["messages"][-1]
    assert gated["role"] == "user" and gated["content"].startswith(
        "<stop_gate_feedback> You cannot finish yet."
    )
    assert "- step_1: Book a hotel (pending)" in gated["content"]
    plans = [f.json()["plan"] for f in frames if f.event == "plan"]
    assert [p["steps"][0]["status"] for p in plans] == ["pending", "done"]
    flow = next(f.json() for f in frames if f.event == "flowResponses")
    assert next(r for r in flow if r["nodeId"] == "ag")["finishReason"] == "stop"

    scripted.set_script([text_turn("Anything else?")])  # the next turn restores the rejection as it was
    ask(agent_server, app_id, "thanks", chatId="gate-chat")
    sent = scripted.chat_requests[-1]["messages"]
    assert [(m["role"], m["content"][:20]) for m in sent[1:-1]] == [
        ("user", "book my trip"),
        ("assistant", "All set."),
        ("user", "<stop_gate_feedback>"),
        ("assistant", "Hotel booked."),
    ]
    assert sent[3]["content"] == gated["content"]


def test_an_unfinished_plan_is_the_next_turns_active_plan(
    agent_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = agent_app(agent_server, agent_node(maxStopGateRejections=0))
    scripted.clear()
    scripted.set_script(
        [
            tool_call_turn([("set_plan", {"name": "Move", "steps": ["Pack", "Ship"]})]),
            text_turn("Packing first."),
            tool_call_turn(
                [("update_plan", {"updates": [{"id": "step_2", "status": "done"}]})],
            ),
            text_turn("Shipped."),
        ]
    )
    ask(agent_server, app_id, "help me move", chatId="plan-chat")
    ask(agent_server, app_id, "the boxes shipped", chatId="plan-chat")
    reply = list(tool_replies(scripted.chat_requests[-1]).values())[-1]
    assert reply.startswith("Updated 1 plan step(s).")
    assert "- step_1: Pack | status=pending" in reply and "- step_2: Ship | status=done" in reply


def test_the_agent_node_sends_the_agent_guide_and_the_tool_call_node_the_raw_prompt(
    agent_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    scripted.clear()
    scripted.set_script([text_turn("Hi."), text_turn("Hi.")])
    ask(agent_server, agent_app(agent_server, agent_node()), "hello")
    ask(agent_server, agent_app(agent_server, agent_node("tools")), "hello")
    agent, tool_call = (request["messages"][0] for request in scripted.chat_requests)
    assert agent["role"] == "system" and agent["content"].startswith(AGENT_GUIDE)
    assert TOOL_GUIDES["plan"] in agent["content"] and TOOL_GUIDES["ask"] in agent["content"]
    assert agent["content"].endswith("\n\nAnswer in English.")
    assert tool_call == {"role": "system", "content": "Answer in English."}


def test_the_current_message_carries_the_reminder_with_files_datasets_time_and_workspace(
    agent_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with agent_server.client() as client:
        dataset = client.post("/api/core/dataset/create", json={"name": "Handbook <HR>"}).json()["data"]
    params = {"datasets": [{"datasetId": dataset, "name": "Handbook <HR>"}], "searchMode": "fullTextRecall"}
    app_id = agent_app(agent_server, agent_node(agent_datasetParams=params, useAgentSandbox=True))
    scripted.clear()
    scripted.set_script([text_turn("Noted.")])
    ask(agent_server, app_id, "what is the leave policy?")
    request = scripted.chat_requests[0]
    current = request["messages"][-1]["content"]
    assert current.startswith("<system-reminder>\n") and current.endswith(
        "</system-reminder>\nwhat is the leave policy?"
    )
    assert f"<dataset><id>{dataset}</id><name>Handbook &lt;HR&gt;</name></dataset>" in current
    assert re.search(r"Current time: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", current)
    assert "Sandbox working directory: /workspace" in current
    offered = [t["function"]["name"] for t in request["tools"]]
    assert offered == [
        "ask_user",
        "set_plan",
        "update_plan",
        "sandbox_shell",
        "sandbox_read_file",
        "sandbox_write_file",
        "sandbox_edit_file",
        "sandbox_grep",
        "sandbox_find",
        "sandbox_ls",
        "sandbox_get_file_url",
        "dataset_search",
    ]
    assert TOOL_GUIDES["dataset_search"] in request["messages"][0]["content"]


def test_sandbox_tools_work_in_the_chat_workspace_and_refuse_paths_outside_it(
    agent_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = agent_app(agent_server, agent_node(useAgentSandbox=True, planEnabled=False))
    scripted.clear()
    scripted.set_script(
        [
            tool_call_turn(
                [
                    ("sandbox_write_file", {"path": "notes/a.txt", "content": "alpha\nbeta"}, "w"),
                    ("sandbox_read_file", {"path": "/workspace/notes/a.txt", "offset": 1}, "r"),
                    ("sandbox_grep", {"pattern": "alph"}, "g"),
                    ("sandbox_read_file", {"path": "../../../etc/passwd"}, "x"),
                    ("sandbox_shell", {"command": "ls"}, "s"),
                ]
            ),
            text_turn("Done."),
        ]
    )
    reply = ask(agent_server, app_id, "take notes", chatId="sandbox-chat")
    replies = tool_replies(scripted.chat_requests[1])
    assert replies["w"] == "Wrote 10 characters to /workspace/notes/a.txt"
    assert replies["r"] == "beta"
    assert replies["g"] == "/workspace/notes/a.txt:1: alpha"
    assert replies["x"] == "Tool error: Path ../../../etc/passwd is outside the sandbox workspace /workspace"
    assert replies["s"] == "Sandbox tool sandbox_shell is not supported by this sandbox."
    runs = {run["id"]: run for run in node_detail(reply)["toolRuns"]}
    assert runs["x"]["errorMessage"] == replies["x"]


def wait_ingested(client: Any, dataset: str, collection: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        listing = client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset}).json()[
            "data"
        ]
        item = next(i for i in listing["list"] if i["_id"] == collection)
        if item["trainingAmount"] == 0 or item["hasError"]:
            assert not item["hasError"], item
            return
        assert time.monotonic() < deadline, item
        time.sleep(0.2)


def test_dataset_search_searches_the_selected_knowledge_base_through_the_search_service(
    agent_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    with agent_server.client() as client:
        dataset = client.post("/api/core/dataset/create", json={"name": "HR"}).json()["data"]
        empty = client.post("/api/core/dataset/create", json={"name": "Empty"}).json()["data"]
        text = "Annual leave is twenty-five days per year for every employee."
        body = {"datasetId": dataset, "name": "leave.txt", "text": text}
        collection = client.post("/api/core/dataset/collection/create/text", json=body).json()["data"]
        wait_ingested(client, dataset, collection["collectionId"])
    params = {"datasets": [{"datasetId": dataset, "name": "HR"}], "searchMode": "fullTextRecall"}
    app_id = agent_app(agent_server, agent_node(agent_datasetParams=params, planEnabled=False))
    empty_params = {"datasets": [{"datasetId": empty, "name": "Empty"}], "searchMode": "fullTextRecall"}
    empty_app = agent_app(agent_server, agent_node(agent_datasetParams=empty_params, planEnabled=False))
    scripted.clear()
    scripted.set_script(
        [
            tool_call_turn([("dataset_search", {"query": "annual leave days"}, "d")]),
            text_turn("Twenty-five days."),
            tool_call_turn([("dataset_search", {"query": "annual leave days"}, "e")]),
            text_turn("Nothing found."),
        ]
    )
    ask(agent_server, app_id, "how much leave?")
    found = tool_replies(scripted.chat_requests[1])["d"]
    assert found.startswith("<source>leave.txt</source>") and text in found
    ask(agent_server, empty_app, "how much leave?")
    assert tool_replies(scripted.chat_requests[3])["e"] == "No matching content in the knowledge bases."


def test_a_checkpoint_is_stored_hidden_and_the_next_turn_starts_from_it_with_usage_split(
    agent_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = agent_app(agent_server, agent_node(model=TINY, planEnabled=False, askEnabled=False))
    long_question = "Please remember the codeword HELIOTROPE. " + "filler words " * 600
    checkpoint = "<context_checkpoint>\nGoal: the user's codeword is HELIOTROPE.\n</context_checkpoint>"
    scripted.clear()
    scripted.set_script(
        [
            text_turn(checkpoint, usage=(7000, 800)),  # the compression call
            text_turn("Remembered.", usage=(100, 10)),  # the agent call
            text_turn("It is HELIOTROPE.", usage=(50, 5)),  # turn two
        ]
    )
    first = ask(agent_server, app_id, long_question, chatId="cp-chat")
    compress_request, agent_request = scripted.chat_requests[:2]
    assert compress_request["messages"][0]["content"].startswith("You compress a long agent conversation")
    assert agent_request["messages"][1] == {"role": "user", "content": checkpoint}
    assert [m["role"] for m in agent_request["messages"]] == ["system", "user"]

    detail = node_detail(first)
    assert (detail["toolCallInputTokens"], detail["toolCallOutputTokens"]) == (100, 10)
    assert detail["totalPoints"] == pytest.approx((100 * 1 + 10 * 2) / 1000)
    assert detail["compressUsages"] == [
        {
            "moduleName": "account_usage:compress_llm_messages",
            "totalPoints": pytest.approx((7000 * 1 + 800 * 2) / 1000),
            "model": TINY,
            "inputTokens": 7000,
            "outputTokens": 800,
        }
    ]
    assert first["choices"][0]["message"]["content"] == "Remembered."  # the checkpoint stays hidden

    with agent_server.client() as client:
        records = client.post(
            "/api/core/chat/getPaginationRecords", json={"appId": app_id, "chatId": "cp-chat", "pageSize": 10}
        ).json()["data"]["list"]
    stored = next(r for r in records if r["obj"] == "AI")["value"]
    assert {"type": "contextCheckpoint", "contextCheckpoint": checkpoint, "hideInUI": True} in stored

    second = ask(agent_server, app_id, "what was the codeword?", chatId="cp-chat")
    sent = scripted.chat_requests[2]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1] == {"role": "user", "content": checkpoint}
    assert sent[2] == {"role": "assistant", "content": "Remembered."}
    assert sent[3]["content"].endswith("what was the codeword?")
    assert "filler words" not in json.dumps(sent)  # the long first question is only in the checkpoint
    assert node_detail(second)["toolCallInputTokens"] == 50
