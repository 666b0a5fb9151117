"""Loading FastGPT workflow JSON: validation errors name the node or edge; the JSON round-trips."""

from __future__ import annotations

import json
from typing import Any

import pytest
from wf_builders import answer, edge, start, workflow

from fathom.workflow import WorkflowGraphError, load_workflow

# A hand-written FastGPT export: start → dataset search → chat → answer, plus a user-select branch,
# with the extra fields FastGPT stores (position, avatar, intro, chatConfig…).
EXPORT: dict[str, Any] = {
    "nodes": [
        {
            "nodeId": "userGuide",
            "name": "系统配置",
            "intro": "可以配置应用的系统参数",
            "avatar": "core/workflow/template/systemConfig",
            "flowNodeType": "userGuide",
            "position": {"x": 531.2, "y": -120.5},
            "version": "481",
            "inputs": [
                {"key": "welcomeText", "renderTypeList": ["hidden"], "valueType": "string", "value": "Hi"}
            ],
            "outputs": [],
        },
        {
            "nodeId": "workflowStartNodeId",
            "name": "流程开始",
            "intro": "",
            "avatar": "core/workflow/template/workflowStart",
            "flowNodeType": "workflowStart",
            "position": {"x": 558.4, "y": 123.7},
            "version": "481",
            "inputs": [
                {
                    "key": "userChatInput",
                    "renderTypeList": ["reference", "textarea"],
                    "valueType": "string",
                    "label": "用户问题",
                    "required": True,
                    "toolDescription": "用户问题",
                }
            ],
            "outputs": [
                {
                    "id": "userChatInput",
                    "key": "userChatInput",
                    "label": "q",
                    "type": "static",
                    "valueType": "string",
                }
            ],
        },
        {
            "nodeId": "iKBoX2vIzETU",
            "name": "知识库搜索",
            "flowNodeType": "datasetSearchNode",
            "showStatus": True,
            "position": {"x": 918.0, "y": 100.0},
            "version": "481",
            "inputs": [
                {
                    "key": "datasets",
                    "renderTypeList": ["selectDataset"],
                    "valueType": "selectDataset",
                    "value": [],
                },
                {"key": "similarity", "renderTypeList": ["selectDatasetParamsModal"], "value": 0.4},
                {"key": "limit", "renderTypeList": ["hidden"], "valueType": "number", "value": 5000},
                {
                    "key": "searchMode",
                    "renderTypeList": ["hidden"],
                    "valueType": "string",
                    "value": "embedding",
                },
                {
                    "key": "userChatInput",
                    "renderTypeList": ["reference", "textarea"],
                    "valueType": "string",
                    "value": ["workflowStartNodeId", "userChatInput"],
                },
            ],
            "outputs": [
                {
                    "id": "quoteQA",
                    "key": "quoteQA",
                    "type": "static",
                    "valueType": "datasetQuote",
                    "label": "q",
                }
            ],
        },
        {
            "nodeId": "7BdojPlukIQw",
            "name": "AI 对话",
            "flowNodeType": "chatNode",
            "showStatus": True,
            "position": {"x": 1300.0, "y": 100.0},
            "version": "4813",
            "catchError": False,
            "inputs": [
                {
                    "key": "model",
                    "renderTypeList": ["settingLLMModel", "reference"],
                    "valueType": "string",
                    "value": "gpt",
                },
                {"key": "temperature", "renderTypeList": ["hidden"], "value": 0},
                {
                    "key": "history",
                    "renderTypeList": ["numberInput", "reference"],
                    "valueType": "chatHistory",
                    "value": 6,
                },
                {
                    "key": "quoteQA",
                    "renderTypeList": ["settingDatasetQuotePrompt"],
                    "value": ["iKBoX2vIzETU", "quoteQA"],
                },
            ],
            "outputs": [
                {
                    "id": "answerText",
                    "key": "answerText",
                    "type": "static",
                    "valueType": "string",
                    "label": "a",
                }
            ],
        },
        {
            "nodeId": "pick",
            "name": "用户选择",
            "flowNodeType": "userSelect",
            "version": "489",
            "position": {"x": 900.0, "y": 400.0},
            "inputs": [
                {
                    "key": "description",
                    "renderTypeList": ["textarea"],
                    "valueType": "string",
                    "value": "More?",
                },
                {
                    "key": "userSelectOptions",
                    "renderTypeList": ["custom"],
                    "valueType": "any",
                    "value": [{"value": "Yes", "key": "option1"}, {"value": "No", "key": "option2"}],
                },
            ],
            "outputs": [
                {"id": "selectResult", "key": "selectResult", "type": "static", "valueType": "string"}
            ],
        },
        {
            "nodeId": "done",
            "name": "指定回复",
            "flowNodeType": "answerNode",
            "version": "481",
            "inputs": [
                {
                    "key": "text",
                    "renderTypeList": ["textarea", "reference"],
                    "valueType": "any",
                    "value": "ok",
                }
            ],
            "outputs": [],
        },
    ],
    "edges": [
        {
            "source": "workflowStartNodeId",
            "target": "iKBoX2vIzETU",
            "sourceHandle": "workflowStartNodeId-source-right",
            "targetHandle": "iKBoX2vIzETU-target-left",
        },
        {
            "source": "iKBoX2vIzETU",
            "target": "7BdojPlukIQw",
            "sourceHandle": "iKBoX2vIzETU-source-right",
            "targetHandle": "7BdojPlukIQw-target-left",
        },
        {
            "source": "7BdojPlukIQw",
            "target": "pick",
            "sourceHandle": "7BdojPlukIQw-source-right",
            "targetHandle": "pick-target-left",
        },
        {
            "source": "pick",
            "target": "done",
            "sourceHandle": "pick-source-option1",
            "targetHandle": "done-target-left",
        },
    ],
    "chatConfig": {"welcomeText": "Hi", "variables": [], "_id": "66f1"},
}


def test_fastgpt_export_round_trips_to_identical_json() -> None:
    graph = load_workflow(json.dumps(EXPORT, ensure_ascii=False))
    assert graph.to_dict() == EXPORT
    assert json.loads(json.dumps(graph.to_dict(), ensure_ascii=False)) == EXPORT
    assert graph.node("7BdojPlukIQw").flow_node_type == "chatNode"
    assert graph.node("7BdojPlukIQw").inputs[2].value == 6


def test_loading_accepts_a_dict_or_a_loaded_graph() -> None:
    graph = load_workflow(EXPORT)
    assert load_workflow(graph) is graph


@pytest.mark.parametrize(
    ("graph", "message"),
    [
        (
            workflow([start(), {"nodeId": "x", "name": "X", "flowNodeType": "madeUpNode"}], []),
            "node 'x' (X) has unknown flowNodeType 'madeUpNode'",
        ),
        (workflow([start(), answer("a", "1"), answer("a", "2")], []), "duplicate node id 'a'"),
        (
            workflow([start(), answer("a", "1")], [edge("start", "ghost")]),
            "edge #0 (start:start-source-right -> ghost:ghost-target-left): "
            "target node 'ghost' does not exist",
        ),
        (
            workflow([start(), answer("a", "1")], [edge("a", "start"), edge("nobody", "a")]),
            "edge #1 (nobody:nobody-source-right -> a:a-target-left): source node 'nobody' does not exist",
        ),
        (
            workflow([answer("a", "1"), answer("b", "2")], [edge("a", "b"), edge("b", "a")]),
            "workflow has no entry node: add a workflowStart, pluginInput or userGuide node",
        ),
    ],
    ids=["unknown-type", "duplicate-id", "dangling-target", "dangling-source", "cycle-without-entry"],
)
def test_invalid_graph_errors_name_the_culprit(graph: dict[str, Any], message: str) -> None:
    with pytest.raises(WorkflowGraphError) as caught:
        load_workflow(graph)
    assert str(caught.value) == message


def test_missing_required_field_names_the_node() -> None:
    with pytest.raises(WorkflowGraphError, match=r"node 'n1' field flowNodeType: Field required"):
        load_workflow({"nodes": [{"nodeId": "n1"}], "edges": []})


def test_bad_json_text_is_a_graph_error() -> None:
    with pytest.raises(WorkflowGraphError, match="not valid JSON"):
        load_workflow("{nodes: ")
    with pytest.raises(WorkflowGraphError, match="JSON object"):
        load_workflow("[]")


def test_single_tool_app_without_start_node_is_valid() -> None:
    graph = load_workflow({"nodes": [{"nodeId": "t", "flowNodeType": "tool"}], "edges": []})
    assert graph.nodes[0].node_id == "t"
