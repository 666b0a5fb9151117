"""FastGPT's simple-app form ``{aiSettings, dataset, selectedTools, chatConfig}`` compiled to the workflow
FastGPT builds from it (``form2AppWorkflow``): system config, start, then

- no tools, no knowledge base: start → AI chat;
- knowledge bases: start → dataset search → AI chat (the chat quotes the search's ``quoteQA``);
- tools: start → Tool Call node, with the knowledge-base search and every selected tool as its tools.

Node ids are FastGPT's where it fixes them (``workflowStartNodeId``, the chat and search nodes), so chat
records and ``responseData`` look the same as FastGPT's for the same form.
"""

from __future__ import annotations

import hashlib
from typing import Any

from fathom.chat.errors import ChatError

FORM_KEYS = ("aiSettings", "dataset", "selectedTools")
START_ID = "workflowStartNodeId"
GUIDE_ID = "userGuide"
CHAT_ID = "7BdojPlukIQw"
DATASET_ID = "iKBoX2vIzETU"

_AI_DEFAULTS: dict[str, Any] = {
    "model": "",
    "systemPrompt": "",
    "temperature": 0,
    "maxToken": 4000,
    "maxHistories": 6,
    "aiChatReasoning": True,
}
_DATASET_DEFAULTS: dict[str, Any] = {
    "datasets": [],
    "similarity": 0.4,
    "limit": 3000,
    "searchMode": "embedding",
    "embeddingWeight": 0.5,
    "usingReRank": False,
    "rerankModel": "",
    "rerankWeight": 0.5,
    "datasetSearchUsingExtensionQuery": False,
    "datasetSearchExtensionModel": "",
    "datasetSearchExtensionBg": "",
}


def is_simple_form(values: dict[str, Any]) -> bool:
    """True when ``values`` is (or carries) FastGPT's simple-app form."""
    return isinstance(values.get("aiSettings"), dict)


def _input(key: str, value: Any, value_type: str, render: str = "hidden") -> dict[str, Any]:
    return {"key": key, "label": key, "renderTypeList": [render], "valueType": value_type, "value": value}


def _output(key: str, value_type: str) -> dict[str, Any]:
    return {"id": key, "key": key, "label": key, "type": "static", "valueType": value_type}


def _edge(source: str, target: str, *, tool: bool = False) -> dict[str, Any]:
    if tool:
        return {
            "source": source,
            "target": target,
            "sourceHandle": "selectedTools",
            "targetHandle": "selectedTools",
        }
    return {
        "source": source,
        "target": target,
        "sourceHandle": f"{source}-source-right",
        "targetHandle": f"{target}-target-left",
    }


def _invalid(message: str) -> ChatError:
    return ChatError(message, http_status=400, status_text="invalidParams")


def _stable_id(*parts: Any) -> str:
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:6]


def _chat_node(ai: dict[str, Any], quote: list[str] | None) -> dict[str, Any]:
    inputs = [
        _input("model", ai["model"], "string", "settingLLMModel"),
        _input("temperature", ai["temperature"], "number"),
        _input("maxToken", ai["maxToken"], "number"),
        _input("isResponseAnswerText", True, "boolean"),
        _input("aiChatQuoteRole", ai.get("aiChatQuoteRole") or "system", "string"),
        _input("quoteTemplate", ai.get("quoteTemplate") or "", "string"),
        _input("quotePrompt", ai.get("quotePrompt") or "", "string"),
        _input("systemPrompt", ai["systemPrompt"], "string", "textarea"),
        _input("history", ai["maxHistories"], "chatHistory", "numberInput"),
        _input("userChatInput", [START_ID, "userChatInput"], "string", "reference"),
        _input("quoteQA", quote, "datasetQuote", "settingDatasetQuotePrompt"),
        _input("fileUrlList", [[START_ID, "userFiles"]], "arrayString", "reference"),
        _input("aiChatVision", True, "boolean"),
        _input("aiChatReasoning", ai["aiChatReasoning"], "boolean"),
    ]
    return {
        "nodeId": CHAT_ID,
        "name": "AI 对话",
        "flowNodeType": "chatNode",
        "showStatus": True,
        "inputs": inputs,
        "outputs": [
            _output("history", "chatHistory"),
            _output("answerText", "string"),
            _output("reasoningText", "string"),
        ],
    }


def _dataset_node(dataset: dict[str, Any], question: Any) -> dict[str, Any]:
    inputs = [
        _input("datasets", list(dataset["datasets"]), "selectDataset", "selectDataset"),
        _input("similarity", dataset["similarity"], "number"),
        _input("rerankSimilarity", dataset.get("rerankSimilarity", dataset["similarity"]), "number"),
        _input("limit", dataset["limit"], "number"),
        _input("searchMode", dataset["searchMode"], "string"),
        _input("embeddingWeight", dataset["embeddingWeight"], "number"),
        _input("usingReRank", dataset["usingReRank"], "boolean"),
        _input("rerankModel", dataset["rerankModel"], "string"),
        _input("rerankWeight", dataset["rerankWeight"], "number"),
        _input("datasetSearchUsingExtensionQuery", dataset["datasetSearchUsingExtensionQuery"], "boolean"),
        _input("datasetSearchExtensionModel", dataset["datasetSearchExtensionModel"], "string"),
        _input("datasetSearchExtensionBg", dataset["datasetSearchExtensionBg"], "string"),
        _input("collectionFilterMatch", dataset.get("collectionFilterMatch") or "", "string"),
        {**_input("userChatInput", question, "string", "reference"), "toolDescription": "需要检索的内容"},
    ]
    return {
        "nodeId": DATASET_ID,
        "name": "知识库搜索",
        "intro": "调用知识库搜索能力，查找有关联的内容",
        "flowNodeType": "datasetSearchNode",
        "showStatus": True,
        "inputs": inputs,
        "outputs": [_output("quoteQA", "datasetQuote")],
    }


def _tools_node(node_id: str, ai: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "name": "工具调用",
        "flowNodeType": "tools",
        "showStatus": True,
        "inputs": [
            _input("model", ai["model"], "string", "settingLLMModel"),
            _input("temperature", ai["temperature"], "number"),
            _input("maxToken", ai["maxToken"], "number"),
            _input("systemPrompt", ai["systemPrompt"], "string", "textarea"),
            _input("history", ai["maxHistories"], "chatHistory", "numberInput"),
            _input("fileUrlList", [[START_ID, "userFiles"]], "arrayString", "reference"),
            _input("userChatInput", [START_ID, "userChatInput"], "string", "reference"),
            _input("aiChatVision", True, "boolean"),
            _input("aiChatReasoning", ai["aiChatReasoning"], "boolean"),
        ],
        "outputs": [_output("answerText", "string")],
    }


def _tool_node(tool: Any, index: int, ai: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(tool, dict) or not tool.get("flowNodeType"):
        raise _invalid(f"selectedTools[{index}]: must be a tool node with flowNodeType, inputs and outputs")
    inputs = []
    for item in tool.get("inputs") or []:
        if isinstance(item, dict) and item.get("key") == "forbidStream":
            item = {**item, "value": True}
        elif isinstance(item, dict) and tool["flowNodeType"] == "appModule" and item.get("key") == "history":
            item = {**item, "value": ai["maxHistories"]}
        inputs.append(item)
    node = {
        key: tool[key]
        for key in (
            "pluginId",
            "name",
            "intro",
            "toolDescription",
            "avatar",
            "showStatus",
            "toolConfig",
            "pluginData",
        )
        if key in tool
    }
    node_id = str(
        tool.get("nodeId") or _stable_id(index, tool.get("id"), tool.get("pluginId"), tool.get("name"))
    )
    return {
        **node,
        "nodeId": node_id,
        "flowNodeType": tool["flowNodeType"],
        "name": str(tool.get("name") or tool["flowNodeType"]),
        "inputs": inputs,
        "outputs": list(tool.get("outputs") or []),
    }


def form_to_workflow(values: dict[str, Any]) -> dict[str, Any]:
    """``{nodes, edges, chatConfig}`` of a simple-app form (see the module docstring)."""
    ai = {**_AI_DEFAULTS, **(values.get("aiSettings") or {})}
    dataset = {**_DATASET_DEFAULTS, **(values.get("dataset") or {})}
    tools = values.get("selectedTools") or []
    if not isinstance(tools, list):
        raise _invalid("selectedTools: must be a list of tool nodes")
    web_search = values.get("webSearch")
    if isinstance(web_search, dict) and web_search.get("enabled"):
        raise _invalid(
            "webSearch.enabled: FastGPT's web search calls Bocha's paid API, which Fathom does not provide; "
            "turn it off, or add an HTTP tool that calls your search service"
        )
    chat_config = dict(values.get("chatConfig") or {})
    nodes: list[dict[str, Any]] = [
        {"nodeId": GUIDE_ID, "name": "系统配置", "flowNodeType": "userGuide", "inputs": [], "outputs": []},
        {
            "nodeId": START_ID,
            "name": "流程开始",
            "flowNodeType": "workflowStart",
            "inputs": [_input("userChatInput", "", "string", "reference")],
            "outputs": [_output("userChatInput", "string"), _output("userFiles", "arrayString")],
        },
    ]
    has_datasets = bool(dataset["datasets"])
    if tools:
        tools_id = _stable_id("tools", len(tools), ai["model"])
        nodes.append(_tools_node(tools_id, ai))
        edges = [_edge(START_ID, tools_id)]
        if has_datasets:
            nodes.append(_dataset_node(dataset, ""))
            edges.append(_edge(tools_id, DATASET_ID, tool=True))
        for index, tool in enumerate(tools):
            node = _tool_node(tool, index, ai)
            nodes.append(node)
            edges.append(_edge(tools_id, node["nodeId"], tool=True))
    elif has_datasets:
        nodes += [
            _chat_node(ai, [DATASET_ID, "quoteQA"]),
            _dataset_node(dataset, [START_ID, "userChatInput"]),
        ]
        edges = [_edge(START_ID, DATASET_ID), _edge(DATASET_ID, CHAT_ID)]
    else:
        nodes.append(_chat_node(ai, None))
        edges = [_edge(START_ID, CHAT_ID)]
    return {"nodes": nodes, "edges": edges, "chatConfig": chat_config}
