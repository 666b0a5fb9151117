"""classifyQuestion, contentExtract and cfr through the real ``openai`` client against the scripted
loopback model server; readFiles through a real file reader over local files."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from wf_builders import answer, edge, node_input, output, start, workflow

from fathom.llm import ChatModel
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn
from fathom.workflow import WorkflowServices, run_workflow
from fathom.workflow.nodes.read_files import FileContent

AGENTS = [{"key": "wk1", "value": "Greeting"}, {"key": "wk2", "value": "Question about billing"}]


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAIServer]:
    async with ScriptedOpenAIServer() as scripted:
        yield scripted


def services(server: ScriptedOpenAIServer, *, function_calling: bool = True) -> WorkflowServices:
    def factory(model_id: str) -> ChatModel:
        if model_id != "m":
            raise LookupError(model_id)
        return server.chat_model("m", function_calling=function_calling, input_price=1, output_price=1)

    return WorkflowServices(chat_model_factory=factory)


def classify_graph(model: str = "m") -> dict[str, Any]:
    node = {
        "nodeId": "cq",
        "name": "classify",
        "flowNodeType": "classifyQuestion",
        "version": "481",
        "inputs": [
            node_input("model", model),
            node_input("systemPrompt", "A shop assistant."),
            node_input("history", 6, "chatHistory"),
            node_input("userChatInput", ["start", "userChatInput"]),
            node_input("agents", AGENTS, "any", render="custom"),
        ],
        "outputs": [output("cqResult")],
    }
    return workflow(
        [start(), node, answer("a1", "hello branch"), answer("a2", "billing branch")],
        [edge("start", "cq"), edge("cq", "a1", "wk1"), edge("cq", "a2", "wk2")],
    )


async def test_classify_function_call_picks_branch_and_skips_the_others(
    server: ScriptedOpenAIServer,
) -> None:
    server.set_script([tool_call_turn([("classify_question", {"type": "wk2"})])])
    result = await run_workflow(classify_graph(), query="Why was I charged twice?", services=services(server))
    assert result.run_node_ids == ["start", "cq", "a2"]
    assert result.skipped_node_ids == ["a1"]
    assert result.node_outputs["cq"]["cqResult"] == "Question about billing"
    request = server.chat_requests[0]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "classify_question"}}
    enum = request["tools"][0]["function"]["parameters"]["properties"]["type"]["enum"]
    assert enum == ["wk1", "wk2"]
    assert result.flow_usages[0]["moduleName"] == "classify"
    assert result.system_memories == {"-cq": AGENTS[1]}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("wk1", "Greeting"),
        ("It is: Question about billing", "Question about billing"),
        ("??", "Question about billing"),
    ],
)
async def test_classify_prompt_mode_matches_id_then_description_else_last_type(
    server: ScriptedOpenAIServer, reply: str, expected: str
) -> None:
    server.set_script([text_turn(reply)])
    result = await run_workflow(
        classify_graph(), query="hi", services=services(server, function_calling=False)
    )
    assert result.node_outputs["cq"]["cqResult"] == expected
    assert "tools" not in server.chat_requests[0]
    system = server.chat_requests[0]["messages"][0]["content"]
    assert '"id": "wk1"' in system and "A shop assistant." in system


async def test_classify_unknown_model_and_empty_input_are_node_errors(server: ScriptedOpenAIServer) -> None:
    result = await run_workflow(classify_graph("nope"), query="x", services=services(server))
    assert result.error == "Model nope is undefined, you need to select a chat model."
    assert set(result.skipped_node_ids) == {"a1", "a2"}
    empty = await run_workflow(classify_graph(), query="", services=services(server))
    assert empty.error == "Input is empty"


EXTRACT_KEYS = [
    {"key": "name", "desc": "person name", "valueType": "string", "required": True, "defaultValue": ""},
    {"key": "age", "desc": "age in years", "valueType": "number", "required": False},
    {"key": "city", "desc": "city", "valueType": "string", "required": True, "defaultValue": "unknown"},
]


def extract_graph() -> dict[str, Any]:
    node = {
        "nodeId": "ex",
        "name": "extract",
        "flowNodeType": "contentExtract",
        "version": "481",
        "inputs": [
            node_input("model", "m"),
            node_input("description", "Find the person."),
            node_input("history", 0, "chatHistory"),
            node_input("content", ["start", "userChatInput"]),
            node_input("extractKeys", EXTRACT_KEYS, "any", render="custom"),
        ],
        "outputs": [output("success", "boolean"), output("fields"), output("name"), output("age", "number")],
    }
    return workflow(
        [start(), node, answer("out", "{{$ex.name$}}/{{$ex.age$}}")], [edge("start", "ex"), edge("ex", "out")]
    )


async def test_extract_function_call_cleans_fields_and_fills_required_defaults(
    server: ScriptedOpenAIServer,
) -> None:
    server.set_script([tool_call_turn([("request_function", {"name": "Ada", "age": 36, "extra": "x"})])])
    result = await run_workflow(extract_graph(), query="Ada is 36", services=services(server))
    outputs = result.node_outputs["ex"]
    assert json.loads(outputs["fields"]) == {"name": "Ada", "age": 36, "city": "unknown"}
    assert outputs["success"] is True
    assert result.answer_text == "\nAda/36"
    tool = server.chat_requests[0]["tools"][0]["function"]
    assert tool["name"] == "request_function"
    assert tool["parameters"]["required"] == ["name", "city"]
    assert tool["parameters"]["properties"]["age"] == {"type": "number", "description": "age in years"}


async def test_extract_prompt_mode_reads_json5_object_and_reports_missing_key(
    server: ScriptedOpenAIServer,
) -> None:
    server.set_script([text_turn("Sure: {name: 'Bo', city: '', } done")])
    result = await run_workflow(
        extract_graph(), query="Bo", services=services(server, function_calling=False)
    )
    outputs = result.node_outputs["ex"]
    assert json.loads(outputs["fields"]) == {"name": "Bo", "city": "unknown"}
    assert outputs["success"] is False  # "age" was not found


def cfr_graph() -> dict[str, Any]:
    node = {
        "nodeId": "cfr",
        "name": "query extension",
        "flowNodeType": "cfr",
        "version": "481",
        "inputs": [
            node_input("model", "m"),
            node_input("systemPrompt", ""),
            node_input("history", 6, "chatHistory"),
            node_input("userChatInput", ["start", "userChatInput"]),
        ],
        "outputs": [output("system_text")],
    }
    return workflow([start(), node], [edge("start", "cfr")])


async def test_cfr_outputs_question_plus_deduplicated_rewrites(server: ScriptedOpenAIServer) -> None:
    server.set_script([text_turn('Here: ["what is its price", "What is ITS price", "Fathom price"]')])
    history = [
        {"obj": "Human", "value": [{"type": "text", "text": {"content": "Tell me about Fathom"}}]},
        {"obj": "AI", "value": [{"type": "text", "text": {"content": "It is a platform."}}]},
    ]
    result = await run_workflow(
        cfr_graph(), query="what is its price?", histories=history, services=services(server)
    )
    assert json.loads(result.node_outputs["cfr"]["system_text"]) == [
        "what is its price?",
        "What is ITS price",  # the dedupe ignores punctuation, not case
        "Fathom price",
    ]
    roles = [m["role"] for m in server.chat_requests[0]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


async def test_cfr_reply_without_array_keeps_only_the_question(server: ScriptedOpenAIServer) -> None:
    server.set_script([text_turn("no idea")])
    result = await run_workflow(cfr_graph(), query="q1", services=services(server))
    assert json.loads(result.node_outputs["cfr"]["system_text"]) == ["q1"]


class DirReader:
    """Reads ``file://`` URLs of real files."""

    async def read_file(self, url: str) -> FileContent:
        path = Path(url.removeprefix("file://"))
        text = await asyncio.to_thread(path.read_text, encoding="utf-8")
        return FileContent(name=path.name, text=text)


def read_graph(urls: list[str]) -> dict[str, Any]:
    node = {
        "nodeId": "rf",
        "name": "read files",
        "flowNodeType": "readFiles",
        "version": "489",
        "inputs": [node_input("fileUrlList", urls, "arrayString")],
        "outputs": [output("system_text")],
    }
    return workflow([start(), node], [edge("start", "rf")])


async def test_read_files_renders_each_file_and_reports_unreadable_ones(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha", encoding="utf-8")
    urls = [f"file://{tmp_path / 'a.txt'}", f"file://{tmp_path / 'missing.txt'}"]
    result = await run_workflow(
        read_graph(urls), query="x", services=WorkflowServices(file_reader=DirReader())
    )
    text = result.node_outputs["rf"]["system_text"]
    first, second = text.split("\n******\n")
    assert first == "File: a.txt\n<Content>\nalpha\n</Content>"
    assert second.startswith(f"File: {urls[1]}\n<Content>\nRead file error: ")


async def test_read_files_without_reader_is_a_clear_node_error() -> None:
    result = await run_workflow(read_graph(["file:///x"]), query="x")
    assert result.error == "The read files node needs a file reader service (services.file_reader)"


async def test_classify_shows_last_memory_from_the_history_to_the_model(server: ScriptedOpenAIServer) -> None:
    server.set_script([text_turn("wk1")])
    history = [
        {"obj": "Human", "value": [{"type": "text", "text": {"content": "before"}}]},
        {
            "obj": "AI",
            "value": [{"type": "text", "text": {"content": "ok"}}],
            "memories": {"app1-cq": {"key": "wk2", "value": "Question about billing"}},
        },
    ]
    result = await run_workflow(
        classify_graph(), query="and now?", histories=history, app_id="app1", services=services(server)
    )
    system = server.chat_requests[0]["messages"][0]["content"]
    assert '## Last classification\n{"key": "wk2", "value": "Question about billing"}' in system
    assert result.system_memories == {"app1-cq": AGENTS[0]}
