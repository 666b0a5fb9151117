"""A published version's graph is validated once and shared by all its runs: every run works on copies of
its values, so what one run changes in place never reaches the graph or the next run."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wf_builders import answer, edge, node_input, start, yes_no_join

from fathom.workflow import NodeContext, default_registry
from fathom.workflow.graph import load_workflow
from fathom.workflow.run import _build_variables, run_workflow
from fathom.workflow.runtime import build_runtime_nodes

APPS = Path(__file__).resolve().parents[1] / "chat" / "fastgpt_apps"  # FastGPT's own apps


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


async def test_runs_of_one_loaded_graph_share_its_edge_analysis_and_branch_as_fresh_graphs_do() -> None:
    shared = load_workflow(yes_no_join())
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
        on_fresh = await run_workflow(yes_no_join(), query=query)
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


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=8,
)


def _mutate(value: Any) -> None:
    """Change a JSON value in place wherever it can be changed."""
    if isinstance(value, list):
        for item in value:
            _mutate(item)
        value.append("changed")
    elif isinstance(value, dict):
        for item in value.values():
            _mutate(item)
        value["changed"] = True


@settings(max_examples=60, deadline=None)
@given(input_value=_JSON, default_value=_JSON, output_value=_JSON)
def test_every_run_gets_the_graphs_values_and_no_run_changes_the_next_ones(
    input_value: Any, default_value: Any, output_value: Any
) -> None:
    reply = answer("reply", "hi")
    reply["inputs"].append(node_input("extra", input_value, value_type="any"))
    reply["outputs"] = [
        {
            "id": "o",
            "key": "o",
            "type": "static",
            "valueType": "any",
            "defaultValue": default_value,
            "value": output_value,
        }
    ]
    graph = load_workflow({"nodes": [start(), reply], "edges": [edge("start", "reply")]})
    expected = copy.deepcopy((input_value, default_value, output_value))
    for _ in range(3):
        node = build_runtime_nodes(graph)["reply"]
        extra = next(i for i in node.inputs if i.key == "extra")
        out = node.outputs[0]
        assert (extra.value, out.default_value, out.value) == expected
        assert (out.id, out.key, out.value_type) == ("o", "o", "any")
        for value in (extra.value, out.default_value, out.value):
            _mutate(value)
        extra.render_type_list.append("changed")
    assert next(i for i in graph.nodes[1].inputs if i.key == "extra").value == expected[0]


@pytest.mark.parametrize("path", sorted(APPS.glob("*.json")), ids=lambda p: p.stem)
def test_fastgpt_apps_runtime_nodes_are_their_stored_nodes(path: Path) -> None:
    document = json.loads(path.read_text())
    graph = load_workflow(document.get("workflow", document))
    for _ in range(2):  # the first run makes the graph's templates, the second uses them
        nodes = build_runtime_nodes(graph)
        assert list(nodes) == [node.node_id for node in graph.nodes]
        for stored in graph.nodes:
            built = nodes[stored.node_id]
            assert built.source is stored and built.flow_node_type == stored.flow_node_type
            assert [(i.key, i.value, i.value_type, i.render_type_list, i.can_edit) for i in built.inputs] == [
                (i.key, i.value, i.value_type, i.render_type_list, bool(i.can_edit)) for i in stored.inputs
            ]
            assert [(o.id, o.key, o.value, o.default_value, o.required) for o in built.outputs] == [
                (o.ref_id, o.key, o.value, o.default_value, bool(o.required)) for o in stored.outputs
            ]
            assert (built.show_status, built.catch_error, built.version, built.parent_node_id) == (
                bool(stored.show_status),
                bool(stored.catch_error),
                stored.version,
                stored.parent_node_id,
            )
