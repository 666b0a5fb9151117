"""A published version's graph is validated once and shared by all its runs: every run works on copies of
its values, so what one run changes in place never reaches the graph or the next run."""

from __future__ import annotations

from typing import Any

from wf_builders import answer, node_input, start

from fathom.workflow.graph import load_workflow
from fathom.workflow.run import _build_variables, run_workflow
from fathom.workflow.runtime import build_runtime_nodes


def _graph_with_list_values() -> dict[str, Any]:
    reply = answer("reply", "hi")
    reply["inputs"].append(node_input("tags", ["a", {"k": [1]}], value_type="arrayAny"))
    reply["outputs"] = [
        {"id": "o", "key": "o", "type": "static", "valueType": "arrayAny", "defaultValue": [1]}
    ]
    return {
        "nodes": [start(), reply],
        "edges": [
            {
                "source": "start",
                "target": "reply",
                "sourceHandle": "start-source-right",
                "targetHandle": "reply-target-left",
            }
        ],
        "chatConfig": {
            "variables": [
                {
                    "key": "seen",
                    "label": "seen",
                    "type": "custom",
                    "valueType": "arrayString",
                    "defaultValue": ["x"],
                }
            ]
        },
    }


def test_runtime_nodes_are_copies_of_the_graphs_values() -> None:
    graph = load_workflow(_graph_with_list_values())
    first = build_runtime_nodes(graph)
    tags = next(i for i in first["reply"].inputs if i.key == "tags")
    tags.value.append("changed")
    tags.value[1]["k"].append(2)
    first["reply"].outputs[0].default_value.append(2)
    second = build_runtime_nodes(graph)
    assert next(i for i in second["reply"].inputs if i.key == "tags").value == ["a", {"k": [1]}]
    assert second["reply"].outputs[0].default_value == [1]
    stored = next(i for i in graph.nodes[1].inputs if i.key == "tags")
    assert stored.value == ["a", {"k": [1]}]


def test_a_variables_default_is_copied_into_each_run() -> None:
    graph = load_workflow(_graph_with_list_values())
    first = _build_variables(graph.chat_config, {}, system={})
    first["seen"].append("y")
    assert _build_variables(graph.chat_config, {}, system={})["seen"] == ["x"]
    assert graph.chat_config["variables"][0]["defaultValue"] == ["x"]


async def test_two_runs_of_one_loaded_graph_answer_alike() -> None:
    graph = load_workflow(_graph_with_list_values())
    results = [await run_workflow(graph, query="hello") for _ in range(2)]
    assert [r.error for r in results] == [None, None]
    assert results[0].assistant_responses == results[1].assistant_responses
