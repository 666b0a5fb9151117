"""``pluginModule`` (workflow tool run as a child), ``tool`` (one resolved tool) and ``toolSet``
(expanded into its tools for a Tool Call node)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from wf_builders import answer, edge, node_input, output, start, workflow

from fathom.llm import ChatModel
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn
from fathom.tools import ToolDefinition, function_tool
from fathom.workflow import WorkflowServices, run_workflow
from fathom.workflow.nodes.app_module import ChildApp


@function_tool
def add(a: int, b: int) -> dict[str, int]:
    """Add two integers."""
    return {"sum": a + b}


@function_tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


PLUGIN = workflow(
    [
        {
            "nodeId": "pin",
            "name": "plugin input",
            "flowNodeType": "pluginInput",
            "inputs": [node_input("who", "nobody"), node_input("times", 1, "number")],
            "outputs": [output("who"), output("times", "number")],
        },
        {
            "nodeId": "pout",
            "name": "plugin output",
            "flowNodeType": "pluginOutput",
            "inputs": [node_input("greeting", "Hello {{$pin.who$}} x{{$pin.times$}}")],
            "outputs": [],
        },
    ],
    [edge("pin", "pout")],
)


class Loader:
    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.calls: list[tuple[str, str | None]] = []

    async def load_child_app(self, app_id: str, version: str | None) -> ChildApp:
        self.calls.append((app_id, version))
        if self.refuse:
            raise PermissionError("No permission to read the plugin")
        return ChildApp(app_id=app_id, name="Greeter", workflow=PLUGIN)


def plugin_graph(plugin_id: str = "p1") -> dict[str, Any]:
    node = {
        "nodeId": "plug",
        "name": "Greeter",
        "flowNodeType": "pluginModule",
        "pluginId": plugin_id,
        "version": "v3",
        "inputs": [node_input("who", ["start", "userChatInput"]), node_input("times", "2", "number")],
        "outputs": [output("greeting")],
    }
    return workflow(
        [start(), node, answer("out", "{{$plug.greeting$}}")], [edge("start", "plug"), edge("plug", "out")]
    )


async def test_plugin_runs_with_node_params_and_exposes_plugin_outputs() -> None:
    loader = Loader()
    result = await run_workflow(
        plugin_graph(), query="Ada", services=WorkflowServices(child_app_runner=loader)
    )
    assert loader.calls == [("p1", "v3")]
    assert result.node_outputs["plug"]["greeting"] == "Hello Ada x2"
    assert result.answer_text == "\nHello Ada x2"
    response = next(r for r in result.flow_responses if r["nodeId"] == "plug")
    assert response["pluginOutput"] == {"greeting": "Hello Ada x2"}
    assert response["pluginDetail"] is None  # no write permission
    assert [u["moduleName"] for u in result.flow_usages] == ["Greeter"]


@pytest.mark.parametrize(
    ("plugin_id", "loader", "error"),
    [
        ("", Loader(), "pluginId is empty"),
        ("p1", Loader(refuse=True), "No permission to read the plugin"),
        ("p1", None, "The plugin node needs the child app service"),
    ],
)
async def test_plugin_failures_are_node_errors(plugin_id: str, loader: Loader | None, error: str) -> None:
    result = await run_workflow(
        plugin_graph(plugin_id), query="x", services=WorkflowServices(child_app_runner=loader)
    )
    assert result.error == error
    assert result.skipped_node_ids == ["out"]


class Resolver:
    def __init__(self) -> None:
        self.configs: list[Any] = []

    async def resolve_tools(self, tool_config: Any, plugin_id: str | None) -> Sequence[ToolDefinition]:
        self.configs.append(tool_config)
        if plugin_id == "math-set":
            return [add, shout]
        if plugin_id == "add":
            return [add]
        raise LookupError(f"Tool {plugin_id} not found")


def tool_graph(plugin_id: str) -> dict[str, Any]:
    node = {
        "nodeId": "t",
        "name": "adder",
        "flowNodeType": "tool",
        "pluginId": plugin_id,
        "toolConfig": {"systemTool": {"toolId": plugin_id}},
        "inputs": [node_input("a", 2, "number"), node_input("b", "3", "number")],
        "outputs": [output("sum", "number"), output("system_rawResponse", "any")],
    }
    return workflow([start(), node], [edge("start", "t")])


async def test_tool_node_runs_the_resolved_tool_and_maps_response_keys_to_outputs() -> None:
    resolver = Resolver()
    result = await run_workflow(
        tool_graph("add"), query="x", services=WorkflowServices(tool_resolver=resolver)
    )
    assert resolver.configs == [{"systemTool": {"toolId": "add"}}]
    assert result.node_outputs["t"] == {"sum": 5, "system_rawResponse": {"sum": 5}}


async def test_tool_node_unknown_tool_and_missing_resolver_are_node_errors() -> None:
    missing = await run_workflow(
        tool_graph("nope"), query="x", services=WorkflowServices(tool_resolver=Resolver())
    )
    assert missing.error == "Tool nope not found"
    unwired = await run_workflow(tool_graph("add"), query="x")
    assert unwired.error == "The tool node needs a tool resolver service (services.tool_resolver)"


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAIServer]:
    async with ScriptedOpenAIServer() as scripted:
        yield scripted


async def test_tool_set_is_expanded_into_its_tools_for_the_tool_call_node(
    server: ScriptedOpenAIServer,
) -> None:
    def factory(model_id: str) -> ChatModel:
        return server.chat_model("m")

    caller = {
        "nodeId": "tc",
        "name": "Caller",
        "flowNodeType": "tools",
        "inputs": [node_input("model", "m"), node_input("userChatInput", ["start", "userChatInput"])],
        "outputs": [output("answerText")],
    }
    tool_set = {
        "nodeId": "set",
        "name": "Math",
        "flowNodeType": "toolSet",
        "pluginId": "math-set",
        "inputs": [],
        "outputs": [],
    }
    graph = workflow(
        [start(), caller, tool_set],
        [
            edge("start", "tc"),
            {
                "source": "tc",
                "target": "set",
                "sourceHandle": "selectedTools",
                "targetHandle": "selectedTools",
            },
        ],
    )
    server.set_script(
        [
            tool_call_turn([("add", {"a": 1, "b": 4}, "c1"), ("shout", {"text": "ok"}, "c2")]),
            text_turn("5, OK"),
        ]
    )
    services = WorkflowServices(chat_model_factory=factory, tool_resolver=Resolver())
    result = await run_workflow(graph, query="add", services=services)
    assert [t["function"]["name"] for t in server.chat_requests[0]["tools"]] == ["add", "shout"]
    replies = {
        m["tool_call_id"]: m["content"] for m in server.chat_requests[1]["messages"] if m["role"] == "tool"
    }
    assert replies == {"c1": '{"sum": 5}', "c2": "OK"}
    assert result.node_outputs["tc"]["answerText"] == "5, OK"
    assert result.run_node_ids == ["start", "tc"]
