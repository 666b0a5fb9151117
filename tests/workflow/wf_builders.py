"""Builders for FastGPT-format workflow JSON used by the workflow tests (plain dicts, exactly the
shape FastGPT exports: nodes with inputs/outputs, edges with handle ids)."""

from __future__ import annotations

from typing import Any


def output(key: str, value_type: str = "string", **extra: Any) -> dict[str, Any]:
    return {"id": key, "key": key, "label": key, "type": "static", "valueType": value_type, **extra}


def node_input(
    key: str, value: Any, value_type: str = "string", render: str = "input", **extra: Any
) -> dict[str, Any]:
    return {
        "key": key,
        "value": value,
        "valueType": value_type,
        "renderTypeList": [render],
        "label": key,
        **extra,
    }


def start(node_id: str = "start") -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": "流程开始",
        "flowNodeType": "workflowStart",
        "showStatus": False,
        "version": "481",
        "position": {"x": 0, "y": 0},
        "inputs": [node_input("userChatInput", "", render="reference", required=True)],
        "outputs": [output("userChatInput"), output("userFiles", "arrayString")],
    }


def answer(node_id: str, text: Any) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": f"answer {node_id}",
        "flowNodeType": "answerNode",
        "version": "481",
        "inputs": [node_input("text", text, "any", render="textarea")],
        "outputs": [output("answerText")],
    }


def if_else(node_id: str, groups: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": f"if {node_id}",
        "flowNodeType": "ifElseNode",
        "showStatus": True,
        "version": "481",
        "inputs": [node_input("ifElseList", groups, "any", render="hidden")],
        "outputs": [output("ifElseResult")],
    }


def cond(
    variable: list[str], condition: str, value: Any = "", value_type: str | None = None
) -> dict[str, Any]:
    item: dict[str, Any] = {"variable": variable, "condition": condition, "value": value}
    if value_type:
        item["valueType"] = value_type
    return item


def group(*items: dict[str, Any], join: str = "AND") -> dict[str, Any]:
    return {"condition": join, "list": list(items)}


def variable_update(node_id: str, updates: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": f"update {node_id}",
        "flowNodeType": "variableUpdate",
        "version": "481",
        "inputs": [node_input("updateList", updates, "any", render="hidden")],
        "outputs": [],
    }


def edge(source: str, target: str, handle: str = "right", kind: str = "source") -> dict[str, Any]:
    return {
        "source": source,
        "target": target,
        "sourceHandle": f"{source}-{kind}-{handle}",
        "targetHandle": f"{target}-target-left",
    }


def workflow(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"nodes": nodes, "edges": edges, **extra}


def yes_no_join() -> dict[str, Any]:
    """start → if/else on the question being "yes": A on IF, B → C on ELSE, both into J (skips propagate)."""
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
