"""Child apps (``appModule``): inputs, outputs, usage, streaming, errors and a pause inside the child."""

from __future__ import annotations

from typing import Any

from wf_builders import answer, edge, node_input, output, start, workflow

from fathom.workflow import (
    AnswerEvent,
    FastAnswerEvent,
    WorkflowEvent,
    WorkflowServices,
    resume_workflow,
    run_workflow,
)
from fathom.workflow.nodes.app_module import ChildApp

CHILD = workflow(
    [
        start(),
        answer("c1", "child got {{$start.userChatInput$}} / {{topic}}"),
        {
            "nodeId": "csel",
            "name": "child select",
            "flowNodeType": "userSelect",
            "inputs": [
                node_input("description", "continue?"),
                node_input(
                    "userSelectOptions", [{"key": "y", "value": "yes"}, {"key": "n", "value": "no"}], "any"
                ),
            ],
            "outputs": [output("selectResult")],
        },
        answer("c2", "child finished with {{$csel.selectResult$}}"),
    ],
    [edge("start", "c1"), edge("c1", "csel"), edge("csel", "c2", "y")],
)


class Loader:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []

    async def load_child_app(self, app_id: str, version: str | None) -> ChildApp:
        self.calls.append((app_id, version))
        if app_id != "child-app":
            raise PermissionError("You do not have permission to read this app")
        return ChildApp(app_id=app_id, name="Child", workflow=CHILD, can_write=True)


def parent(plugin_id: str = "child-app", forbid_stream: bool = False, text: Any = None) -> dict[str, Any]:
    app_node = {
        "nodeId": "app",
        "name": "Run child",
        "flowNodeType": "appModule",
        "pluginId": plugin_id,
        "version": "v-pinned",
        "inputs": [
            node_input("userChatInput", text if text is not None else ["start", "userChatInput"]),
            node_input("history", 0, "chatHistory"),
            node_input("system_forbid_stream", forbid_stream, "boolean"),
            node_input("topic", "graphs"),
        ],
        "outputs": [output("answerText"), output("history", "chatHistory")],
    }
    return workflow(
        [start(), app_node, answer("after", "parent saw: {{$app.answerText$}}")],
        [edge("start", "app"), edge("app", "after")],
    )


async def test_child_pause_wraps_as_children_interactive_and_resumes_inside_the_child() -> None:
    loader = Loader()
    services = WorkflowServices(child_app_runner=loader)
    events: list[WorkflowEvent] = []
    first = await run_workflow(parent(), query="hello", services=services, emit=events.append)
    record = first.interactive
    assert record is not None and record["type"] == "childrenInteractive"
    assert record["entryNodeIds"] == ["app"]
    inner = record["params"]["childrenResponse"]
    assert inner["type"] == "userSelect" and inner["entryNodeIds"] == ["csel"]
    assert loader.calls == [("child-app", "v-pinned")]
    texts = [e.text for e in events if isinstance(e, (AnswerEvent, FastAnswerEvent))]
    assert texts[:2] == ["\n", "\nchild got hello / graphs"]
    assert first.answer_text == "\nchild got hello / graphs"

    second = await resume_workflow(parent(), record, "yes", services=services)
    assert second.interactive is None
    assert second.node_outputs["app"]["answerText"] == "\nchild finished with yes"
    assert second.answer_text == "\nchild finished with yes\nparent saw: \nchild finished with yes"
    assert second.run_node_ids == ["app", "after"]
    response = second.flow_responses[0]
    assert response["mergeSignId"] == "app" and response["pluginDetail"][0]["nodeId"] == "csel"


async def test_forbid_stream_keeps_child_text_out_of_the_parent_answer() -> None:
    events: list[WorkflowEvent] = []
    graph = parent(forbid_stream=True)
    result = await run_workflow(
        graph, query="hi", services=WorkflowServices(child_app_runner=Loader()), emit=events.append
    )
    assert result.node_outputs["app"]["answerText"] == "\nchild got hi / graphs"
    assert not any(isinstance(e, (AnswerEvent, FastAnswerEvent)) and "child" in e.text for e in events)
    assert result.answer_text == ""


async def test_child_app_errors_are_node_errors() -> None:
    services = WorkflowServices(child_app_runner=Loader())
    empty = await run_workflow(parent(text=""), query="", services=services)
    assert empty.error == "Input is empty"
    missing = await run_workflow(parent(plugin_id=""), query="x", services=services)
    assert missing.error == "pluginId is empty"
    denied = await run_workflow(parent(plugin_id="secret-app"), query="x", services=services)
    assert denied.error == "You do not have permission to read this app"
    assert denied.skipped_node_ids == ["after"]
