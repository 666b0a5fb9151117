"""Simple apps (model + prompt + knowledge bases + variables + welcome text) compiled to the
FastGPT workflow graph a simple app stands for: start → [dataset search] → AI chat.

The config is what the API stores (camelCase, FastGPT form names)::

    {"model": "gpt-4o", "systemPrompt": "...", "temperature": 0, "maxToken": 2000, "history": 6,
     "datasets": [{"datasetId": "..."}], "datasetSearchSetting": {"similarity": 0.4, "limit": 3000,
     "searchMode": "mixedRecall", "embeddingWeight": 0.5, "usingReRank": false, "rerankWeight": 0.5},
     "quotePrompt": "", "tools": [], "variables": [...], "welcomeText": "Hi"}

``tools`` lists ``{toolSetId}`` (a team MCP/HTTP tool set), ``{appId, name?, description?}`` (a published
app) or tool nodes; an app with tools compiles to FastGPT's form graph, a Tool Call node with those tools.
"""

from __future__ import annotations

from typing import Any

from fathom.chat.errors import ChatError
from fathom.chat.simple_form import form_to_workflow

START_ID = "workflowStartNodeId"
SEARCH_ID = "datasetSearchNode"
CHAT_ID = "chatNode"
GUIDE_ID = "userGuide"

SIMPLE_KEYS = frozenset(
    {
        "model",
        "systemPrompt",
        "temperature",
        "maxToken",
        "history",
        "datasets",
        "datasetSearchSetting",
        "quotePrompt",
        "quoteTemplate",
        "tools",
        "variables",
        "welcomeText",
        "aiChatReasoning",
        "questionGuide",
    }
)
_SEARCH_DEFAULTS: dict[str, Any] = {
    "similarity": 0.4,
    "limit": 3000,
    "searchMode": "embedding",
    "embeddingWeight": 0.5,
    "usingReRank": False,
    "rerankWeight": 0.5,
}


def _input(key: str, value: Any, value_type: str = "any") -> dict[str, Any]:
    return {"key": key, "value": value, "valueType": value_type, "renderTypeList": ["hidden"], "label": key}


def _output(key: str, value_type: str) -> dict[str, Any]:
    return {"id": key, "key": key, "label": key, "type": "static", "valueType": value_type}


def _edge(source: str, target: str) -> dict[str, Any]:
    return {
        "source": source,
        "target": target,
        "sourceHandle": f"{source}-source-right",
        "targetHandle": f"{target}-target-left",
    }


def _dataset_ids(config: dict[str, Any]) -> list[str]:
    """The knowledge base ids a simple app searches."""
    ids = []
    for item in config.get("datasets") or []:
        value = item.get("datasetId") if isinstance(item, dict) else item
        if value:
            ids.append(str(value))
    return ids


def validate_simple_config(config: Any) -> dict[str, Any]:
    """Check a simple app config; return it with unknown keys refused by name."""
    if not isinstance(config, dict):
        raise ChatError("config: must be an object", http_status=400, status_text="invalidParams")
    unknown = sorted(set(config) - SIMPLE_KEYS)
    if unknown:
        raise ChatError(
            f"config: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(SIMPLE_KEYS))}",
            http_status=400,
            status_text="invalidParams",
        )
    tools = config.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            raise _invalid("config.tools: must be a list of tools ({toolSetId} or tool nodes)")
        for index, tool in enumerate(tools):
            if not isinstance(tool, dict) or not any(
                tool.get(k) for k in ("toolSetId", "appId", "flowNodeType")
            ):
                raise _invalid(
                    f"config.tools[{index}]: must be {{toolSetId}} (a team MCP/HTTP tool set), {{appId}} (a "
                    "published app) or a tool node with flowNodeType (as getChildren returns it)"
                )
    history = config.get("history", 6)
    if not isinstance(history, int) or isinstance(history, bool) or history < 0:
        raise ChatError(
            "config.history: must be a whole number ≥ 0", http_status=400, status_text="invalidParams"
        )
    return dict(config)


def _invalid(message: str) -> ChatError:
    return ChatError(message, http_status=400, status_text="invalidParams")


def _app_tool_node(app_id: str, name: str, description: str) -> dict[str, Any]:
    """A published app as a tool: an ``appModule`` node whose question the model writes."""
    question = {
        **_input("userChatInput", "", "string"),
        "renderTypeList": ["reference", "textarea"],
        "required": True,
        "toolDescription": description or "The question or task for the app",
    }
    return {
        "nodeId": f"app{app_id}",
        "flowNodeType": "appModule",
        "pluginId": app_id,
        "name": name,
        "intro": description,
        "inputs": [
            question,
            _input("history", 0, "chatHistory"),
            _input("system_forbid_stream", True, "boolean"),
        ],
        "outputs": [_output("answerText", "string"), _output("history", "chatHistory")],
    }


def _tool_node(tool: dict[str, Any]) -> dict[str, Any]:
    if tool.get("flowNodeType"):
        return tool
    if tool.get("appId"):
        app_id = str(tool["appId"])
        return _app_tool_node(
            app_id, str(tool.get("name") or f"app {app_id}"), str(tool.get("description") or "")
        )
    set_id = str(tool["toolSetId"])
    name = str(tool.get("name") or f"toolSet {set_id}")
    return {"nodeId": f"toolSet{set_id}", "flowNodeType": "toolSet", "pluginId": set_id, "name": name}


def _tools_workflow(config: dict[str, Any], chat_config: dict[str, Any]) -> dict[str, Any]:
    """A simple app with tools: FastGPT's form with the same settings (start → Tool Call node whose
    tools are the chosen sets and nodes, and the knowledge-base search when it has knowledge bases)."""
    setting = {**_SEARCH_DEFAULTS, **(config.get("datasetSearchSetting") or {})}
    form = {
        "aiSettings": {
            "model": config.get("model") or "",
            "systemPrompt": config.get("systemPrompt") or "",
            "temperature": config.get("temperature") or 0,
            "maxToken": config.get("maxToken") or 4000,
            "maxHistories": config.get("history", 6),
            "aiChatReasoning": bool(config.get("aiChatReasoning", True)),
        },
        "dataset": {**setting, "datasets": [{"datasetId": i} for i in _dataset_ids(config)]},
        "selectedTools": [_tool_node(tool) for tool in config["tools"]],
        "chatConfig": chat_config,
    }
    workflow = form_to_workflow(form)
    guide = next(node for node in workflow["nodes"] if node["flowNodeType"] == "userGuide")
    guide["inputs"] = [_input("welcomeText", chat_config["welcomeText"], "string")]
    return workflow


def _simple_chat_config(config: dict[str, Any]) -> dict[str, Any]:
    """The chatConfig of a simple app (welcome text, variables and, when set, the question guide:
    FastGPT's boolean or ``{open, model?, customPrompt?}``)."""
    chat_config: dict[str, Any] = {
        "welcomeText": config.get("welcomeText") or "",
        "variables": list(config.get("variables") or []),
    }
    guide = config.get("questionGuide")
    if guide is not None:
        if not isinstance(guide, bool | dict):
            raise _invalid("config.questionGuide: must be true/false or {open, model?, customPrompt?}")
        chat_config["questionGuide"] = guide
    return chat_config


def compile_simple_app(config: dict[str, Any]) -> dict[str, Any]:
    """The FastGPT workflow JSON ``{nodes, edges, chatConfig}`` of a simple app."""
    config = validate_simple_config(config)
    chat_config = _simple_chat_config(config)
    if config.get("tools"):
        return _tools_workflow(config, chat_config)
    nodes: list[dict[str, Any]] = [
        {
            "nodeId": GUIDE_ID,
            "name": "系统配置",
            "flowNodeType": "userGuide",
            "inputs": [_input("welcomeText", chat_config["welcomeText"], "string")],
            "outputs": [],
        },
        {
            "nodeId": START_ID,
            "name": "流程开始",
            "flowNodeType": "workflowStart",
            "showStatus": False,
            "inputs": [_input("userChatInput", "", "string")],
            "outputs": [_output("userChatInput", "string"), _output("userFiles", "arrayString")],
        },
    ]
    edges: list[dict[str, Any]] = []
    previous = START_ID
    chat_inputs = [
        _input("model", config.get("model") or "", "string"),
        _input("systemPrompt", config.get("systemPrompt") or "", "string"),
        _input("temperature", config.get("temperature"), "number"),
        _input("maxToken", config.get("maxToken"), "number"),
        _input("history", config.get("history", 6), "chatHistory"),
        _input("userChatInput", [START_ID, "userChatInput"], "string"),
    ]
    if config.get("aiChatReasoning") is not None:
        chat_inputs.append(_input("aiChatReasoning", bool(config["aiChatReasoning"]), "boolean"))
    for key in ("quotePrompt", "quoteTemplate"):
        if config.get(key):
            chat_inputs.append(_input(key, config[key], "string"))
    ids = _dataset_ids(config)
    if ids:
        setting = {**_SEARCH_DEFAULTS, **(config.get("datasetSearchSetting") or {})}
        nodes.append(
            {
                "nodeId": SEARCH_ID,
                "name": "知识库搜索",
                "flowNodeType": "datasetSearchNode",
                "showStatus": True,
                "inputs": [
                    _input("datasets", [{"datasetId": i} for i in ids], "selectDataset"),
                    *(_input(key, setting[key]) for key in _SEARCH_DEFAULTS),
                    *([_input("rerankModel", setting["rerankModel"])] if setting.get("rerankModel") else []),
                    *(
                        [_input("collectionFilterMatch", setting["collectionFilterMatch"])]
                        if setting.get("collectionFilterMatch")
                        else []
                    ),
                    _input("userChatInput", [START_ID, "userChatInput"], "string"),
                ],
                "outputs": [_output("quoteQA", "datasetQuote")],
            }
        )
        edges.append(_edge(previous, SEARCH_ID))
        previous = SEARCH_ID
        chat_inputs.append(_input("quoteQA", [SEARCH_ID, "quoteQA"], "datasetQuote"))
    nodes.append(
        {
            "nodeId": CHAT_ID,
            "name": "AI 对话",
            "flowNodeType": "chatNode",
            "showStatus": True,
            "inputs": chat_inputs,
            "outputs": [
                _output("history", "chatHistory"),
                _output("answerText", "string"),
                _output("reasoningText", "string"),
            ],
        }
    )
    edges.append(_edge(previous, CHAT_ID))
    return {"nodes": nodes, "edges": edges, "chatConfig": chat_config}
