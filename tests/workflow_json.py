"""Builders for workflow JSON as FastGPT's editor saves it (nodes, typed input fields, edges), shared by the
tests that post workflow apps to the HTTP API. Importable from any test folder: ``tests/`` is on
``sys.path`` through its ``conftest.py`` (pytest's default import mode)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

#: copies of FastGPT's own apps (shared/datasets/fastgpt-apps; provenance and licence in SOURCES.txt)
FASTGPT_APPS = Path(__file__).resolve().parent / "chat" / "fastgpt_apps"


def field(
    key: str, value: Any, value_type: str = "string", render: str = "input", **extra: Any
) -> dict[str, Any]:
    """A node input as the editor saves it: typed, one render type, labelled with its key."""
    return {
        "key": key,
        "value": value,
        "valueType": value_type,
        "renderTypeList": [render],
        "label": key,
    } | extra


def edge(source: str, target: str, handle: str = "right") -> dict[str, Any]:
    """An edge from ``source``'s ``handle`` (``right``, or an if/else or user-select branch) to ``target``."""
    return {
        "source": source,
        "target": target,
        "sourceHandle": f"{source}-source-{handle}",
        "targetHandle": f"{target}-target-left",
    }


START: dict[str, Any] = {
    "nodeId": "start",
    "name": "start",
    "flowNodeType": "workflowStart",
    "inputs": [],
    "outputs": [
        {"id": "userChatInput", "key": "userChatInput", "valueType": "string"},
        {"id": "userFiles", "key": "userFiles", "valueType": "arrayString"},
    ],
}
"""A bare workflowStart node with the user's question and files."""

START_TEXT: dict[str, Any] = {
    "nodeId": "start",
    "name": "start",
    "flowNodeType": "workflowStart",
    "inputs": [],
    "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string"}],
}
"""A bare workflowStart node with only the user's question."""


def typed_start() -> dict[str, Any]:
    """The workflowStart node with a typed ``userChatInput`` input and static output (a fresh copy)."""
    return {
        "nodeId": "start",
        "name": "start",
        "flowNodeType": "workflowStart",
        "inputs": [field("userChatInput", "")],
        "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string", "type": "static"}],
    }


def answer(node_id: str, text: str) -> dict[str, Any]:
    """A bare answerNode that says ``text`` (variables in ``{{$node.key$}}`` form are filled in)."""
    return {
        "nodeId": node_id,
        "name": node_id,
        "flowNodeType": "answerNode",
        "inputs": [{"key": "text", "value": text}],
        "outputs": [],
    }


def typed_answer(text: str) -> dict[str, Any]:
    """The answerNode ``answer`` with a typed ``text`` input field."""
    return {
        "nodeId": "answer",
        "name": "answer",
        "flowNodeType": "answerNode",
        "inputs": [field("text", text)],
        "outputs": [],
    }


def tool_caller(caller_type: str, model: str) -> dict[str, Any]:
    """The ``caller`` node of type ``caller_type`` (``tools`` or ``agent``) that answers the user's question
    with ``model`` and no history, calling the tools wired to it with :func:`tool_edge`."""
    return {
        "nodeId": "caller",
        "name": "Caller",
        "flowNodeType": caller_type,
        "inputs": [
            {"key": "model", "value": model},
            {"key": "history", "value": 0, "valueType": "chatHistory"},
            {"key": "userChatInput", "value": ["start", "userChatInput"]},
        ],
        "outputs": [{"id": "answerText", "key": "answerText", "valueType": "string"}],
    }


def tool_edge(source: str, target: str) -> dict[str, Any]:
    """The edge that makes ``target`` one of the tools of the caller ``source``."""
    handles = {"sourceHandle": "selectedTools", "targetHandle": "selectedTools"}
    return {"source": source, "target": target, **handles}


def loop_of_searches(dataset_id: str) -> dict[str, Any]:
    """An app body: FastGPT's ``fgtest-loopTest`` with the answer node in its loop replaced by the
    knowledge-base search of ``fg-simpleDatasetChat`` (``dataset_id`` picked, no query extension),
    searching for each item of the variable ``list``, which holds texts."""
    document: dict[str, Any] = json.loads((FASTGPT_APPS / "fgtest-loopTest.json").read_text(encoding="utf-8"))
    simple = json.loads((FASTGPT_APPS / "fg-simpleDatasetChat.json").read_text(encoding="utf-8"))
    nodes = document["nodes"]
    start = next(n for n in nodes if n["flowNodeType"] == "loopStart")
    answer = next(n for n in nodes if n["flowNodeType"] == "answerNode")
    searches = [n for n in simple["workflow"]["nodes"] if n["flowNodeType"] == "datasetSearchNode"]
    search = copy.deepcopy(searches[0])
    search["parentNodeId"] = answer["parentNodeId"]
    settings = {
        "datasets": [{"datasetId": dataset_id}],
        "userChatInput": [start["nodeId"], "loopStartInput"],
        "datasetSearchUsingExtensionQuery": False,
    }
    for item in search["inputs"]:
        item["value"] = settings.get(item["key"], item.get("value"))
    document["nodes"] = [search if n is answer else n for n in nodes]
    for edge in document["edges"]:
        if edge["target"] == answer["nodeId"]:
            edge.update(target=search["nodeId"], targetHandle=f"{search['nodeId']}-target-left")
    for variable in document["chatConfig"]["variables"]:
        if variable["key"] == "list":
            variable.update(valueType="arrayString", defaultValue='["How are refunds paid?"]')
    return {"name": "fgtest-loopTest", "type": "advanced", **document}
