"""A published version's graph is validated once and shared by all its runs: every run works on copies of
its values, so what one run changes in place never reaches the graph or the next run."""

from __future__ import annotations

from typing import Any

from wf_builders import answer, cond, edge, group, if_else, node_input, start, workflow

from fathom.workflow import NodeContext, default_registry
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


def _branching_graph() -> dict[str, Any]:
    return workflow(
        [
            start(),
            if_else("check", [group(cond(["start", "userChatInput"], "equalTo", "yes"))]),
            answer("a", "A"),
            answer("b", "B"),
            answer("c", "C"),
            answer("j", "J"),
        ],
        [
            edge("start", "check"),
            edge("check", "a", "IF"),
            edge("check", "b", "ELSE"),
            edge("a", "j"),
            edge("b", "c"),
            edge("c", "j"),
        ],
    )


async def test_runs_of_one_loaded_graph_share_its_edge_analysis_and_branch_as_fresh_graphs_do() -> None:
    shared = load_workflow(_branching_graph())
    classifiers: list[Any] = []
    registry = default_registry.copy()

    dispatch_start = default_registry.get("workflowStart")
    assert dispatch_start is not None

    async def seen(ctx: NodeContext) -> Any:
        classifiers.append(ctx.run.classifier)
        return await dispatch_start(ctx)

    registry.register("workflowStart")(seen)
    for query in ("yes", "no", "yes", "no"):
        on_shared = await run_workflow(shared, query=query, registry=registry)
        on_fresh = await run_workflow(_branching_graph(), query=query)
        assert on_shared.run_node_ids == on_fresh.run_node_ids
        assert on_shared.skipped_node_ids == on_fresh.skipped_node_ids
        assert on_shared.answer_text == on_fresh.answer_text
    assert on_shared.run_node_ids == ["start", "check", "b", "c", "j"]
    assert len(classifiers) == 4 and all(c is classifiers[0] for c in classifiers)
    # a run given its own edge states (a debug step) analyses them itself
    await run_workflow(
        shared,
        query="yes",
        registry=registry,
        runtime_edges=[e.model_dump(by_alias=True) for e in shared.edges],
    )
    assert classifiers[-1] is not classifiers[0]
