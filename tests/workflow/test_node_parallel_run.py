"""``parallelRun``: the nested body runs once per item on its own node copies; results keep input
order; failures are per item; variables updated inside a task do not leak out."""

from __future__ import annotations

from typing import Any

from wf_builders import answer, edge, node_input, output, start, variable_update, workflow

from fathom.workflow import run_workflow


def body_nodes(template: str) -> list[dict[str, Any]]:
    return [
        {
            "nodeId": "ls",
            "name": "start",
            "flowNodeType": "loopStart",
            "parentNodeId": "par",
            "inputs": [node_input("loopStartInput", "", "any"), node_input("loopStartIndex", 0, "number")],
            "outputs": [output("loopStartInput", "any"), output("loopStartIndex", "number")],
        },
        {
            "nodeId": "te",
            "name": "text",
            "flowNodeType": "textEditor",
            "parentNodeId": "par",
            "inputs": [
                node_input("system_textareaInput", template, render="textarea"),
                node_input("system_addInputParam", {}, "dynamic", render="addInputParam"),
                node_input("x", ["ls", "loopStartInput"], render="reference", canEdit=True),
                node_input("i", ["ls", "loopStartIndex"], "number", render="reference", canEdit=True),
            ],
            "outputs": [output("system_text")],
        },
        variable_update(
            "vu",
            [
                {
                    "variable": ["VARIABLE_NODE_ID", "seen"],
                    "value": ["te", "system_text"],
                    "valueType": "string",
                    "renderType": "reference",
                }
            ],
        )
        | {"parentNodeId": "par"},
        {
            "nodeId": "le",
            "name": "end",
            "flowNodeType": "loopEnd",
            "parentNodeId": "par",
            "inputs": [node_input("loopEndInput", ["te", "system_text"], "any")],
            "outputs": [],
        },
    ]


def graph(items: Any, concurrency: int = 2, items_type: str = "arrayAny") -> dict[str, Any]:
    par = {
        "nodeId": "par",
        "name": "Parallel",
        "flowNodeType": "parallelRun",
        "inputs": [
            node_input("loopInputArray", items, items_type),
            node_input("childrenNodeIdList", ["ls", "te", "vu", "le"], "arrayString", render="hidden"),
            node_input("parallelRunMaxConcurrency", concurrency, "number"),
        ],
        "outputs": [
            output("parallelSuccessResults", "arrayAny"),
            output("parallelFullResults", "arrayObject"),
            output("parallelStatus"),
        ],
    }
    return workflow(
        [start(), par, *body_nodes("{{x}}#{{i}}"), answer("out", "{{$par.parallelStatus$}}")],
        [edge("start", "par"), edge("ls", "te"), edge("te", "vu"), edge("vu", "le"), edge("par", "out")],
        chatConfig={
            "variables": [
                {
                    "key": "seen",
                    "label": "seen",
                    "type": "input",
                    "valueType": "string",
                    "defaultValue": "none",
                }
            ]
        },
    )


async def test_each_item_runs_its_own_body_and_results_keep_input_order() -> None:
    items = ["a", "b", "c", "d", "e"]
    result = await run_workflow(graph(items), query="go")
    outputs = result.node_outputs["par"]
    assert outputs["parallelSuccessResults"] == ["a#1", "b#2", "c#3", "d#4", "e#5"]
    assert outputs["parallelFullResults"][2] == {"success": True, "message": "", "data": "c#3"}
    assert outputs["parallelStatus"] == "allSuccess"
    assert result.answer_text == "\nallSuccess"
    assert result.new_variables["seen"] == "none"  # task variable updates do not leak
    assert result.run_node_ids == ["start", "par", "out"]
    detail = result.flow_responses[1]["parallelDetail"]
    assert sorted(r["moduleType"] for r in detail).count("loopEnd") == 5


async def test_non_array_and_too_many_items_are_node_errors() -> None:
    bad = await run_workflow(graph({"not": "a list"}, items_type="any"), query="go")
    assert bad.error == "Input value is not an array"
    many = await run_workflow(graph(list(range(51))), query="go")
    assert many.error == "Input array length cannot be greater than 50"


async def test_empty_input_is_an_all_success_with_no_results() -> None:
    result = await run_workflow(graph([]), query="go")
    assert result.node_outputs["par"]["parallelSuccessResults"] == []
    assert result.node_outputs["par"]["parallelStatus"] == "allSuccess"
