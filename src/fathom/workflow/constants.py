"""Workflow vocabulary: FastGPT's node types, input/output keys, edge states and handle ids.

Values keep FastGPT's exact spelling because they travel in workflow JSON and on the wire.
"""

from __future__ import annotations

from typing import Final, Literal

from fathom.tools.schema.constants import FlowNodeInputType, WorkflowIOValueType

VARIABLE_NODE_ID: Final = "VARIABLE_NODE_ID"
WORKFLOW_MAX_RUN_TIMES: Final = 500
WORKFLOW_MAX_DEPTH: Final = 20
WORKFLOW_MAX_CONCURRENCY: Final = 10
WORKFLOW_MAX_LOOP_TIMES: Final = 50
SKIP_RUN_COST: Final = 0.1
MAX_TEMPLATE_DEPTH: Final = 10

EdgeStatus = Literal["waiting", "active", "skipped"]
HandleType = Literal["source", "source_catch", "target"]


class FlowNodeType:
    """``flowNodeType`` values (FastGPT ``FlowNodeTypeEnum``)."""

    emptyNode: Final = "emptyNode"
    systemConfig: Final = "userGuide"
    pluginConfig: Final = "pluginConfig"
    globalVariable: Final = "globalVariable"
    comment: Final = "comment"
    workflowStart: Final = "workflowStart"
    chatNode: Final = "chatNode"
    datasetSearchNode: Final = "datasetSearchNode"
    datasetConcatNode: Final = "datasetConcatNode"
    answerNode: Final = "answerNode"
    classifyQuestion: Final = "classifyQuestion"
    contentExtract: Final = "contentExtract"
    httpRequest468: Final = "httpRequest468"
    runApp: Final = "app"
    appModule: Final = "appModule"
    pluginModule: Final = "pluginModule"
    pluginInput: Final = "pluginInput"
    pluginOutput: Final = "pluginOutput"
    queryExtension: Final = "cfr"
    agent: Final = "agent"
    toolCall: Final = "tools"
    stopTool: Final = "stopTool"
    toolParams: Final = "toolParams"
    lafModule: Final = "lafModule"
    ifElseNode: Final = "ifElseNode"
    variableUpdate: Final = "variableUpdate"
    code: Final = "code"
    textEditor: Final = "textEditor"
    customFeedback: Final = "customFeedback"
    readFiles: Final = "readFiles"
    userSelect: Final = "userSelect"
    loop: Final = "loop"
    loopStart: Final = "loopStart"
    loopEnd: Final = "loopEnd"
    parallelRun: Final = "parallelRun"
    loopRun: Final = "loopRun"
    loopRunStart: Final = "loopRunStart"
    loopRunBreak: Final = "loopRunBreak"
    formInput: Final = "formInput"
    tool: Final = "tool"
    toolSet: Final = "toolSet"


#: Every ``flowNodeType`` FastGPT defines; anything else is rejected when a graph is loaded.
KNOWN_NODE_TYPES: Final[frozenset[str]] = frozenset(
    value for name, value in vars(FlowNodeType).items() if not name.startswith("_") and isinstance(value, str)
)

#: Node types a run starts from (``getWorkflowEntryNodeIds``); ``tool`` only when none of these exist.
ENTRY_NODE_TYPES: Final = frozenset(
    {FlowNodeType.systemConfig, FlowNodeType.workflowStart, FlowNodeType.pluginInput}
)

#: Node types that end an upstream walk as "common" in the run/skip/wait rule.
START_NODE_TYPES: Final = frozenset(
    {FlowNodeType.workflowStart, FlowNodeType.pluginInput, FlowNodeType.loopStart}
)

#: Node types that keep ``isEntry`` after a run starts: they use it to know they are being resumed.
KEEP_ENTRY_NODE_TYPES: Final = frozenset(
    {FlowNodeType.userSelect, FlowNodeType.formInput, FlowNodeType.agent}
)


class NodeInputKey:
    """Input keys the engine and the built-in nodes read (FastGPT ``NodeInputKeyEnum``)."""

    history: Final = "history"
    answerText: Final = "text"
    userChatInput: Final = "userChatInput"
    description: Final = "description"
    textareaInput: Final = "system_textareaInput"
    addInputParam: Final = "system_addInputParam"
    forbidStream: Final = "system_forbid_stream"
    headerSecret: Final = "system_header_secret"
    historyMaxAmount: Final = "maxContext"
    httpReqUrl: Final = "system_httpReqUrl"
    httpHeaders: Final = "system_httpHeader"
    httpMethod: Final = "system_httpMethod"
    httpParams: Final = "system_httpParams"
    httpJsonBody: Final = "system_httpJsonBody"
    httpFormBody: Final = "system_httpFormBody"
    httpContentType: Final = "system_httpContentType"
    httpTimeout: Final = "system_httpTimeout"
    condition: Final = "condition"
    ifElseList: Final = "ifElseList"
    updateList: Final = "updateList"
    userSelectOptions: Final = "userSelectOptions"
    loopInputArray: Final = "loopInputArray"
    childrenNodeIdList: Final = "childrenNodeIdList"
    loopStartInput: Final = "loopStartInput"
    loopStartIndex: Final = "loopStartIndex"
    loopEndInput: Final = "loopEndInput"
    userInputForms: Final = "userInputForms"


class NodeOutputKey:
    """Output keys of the built-in nodes (FastGPT ``NodeOutputKeyEnum``)."""

    userChatInput: Final = "userChatInput"
    history: Final = "history"
    answerText: Final = "answerText"
    reasoningText: Final = "reasoningText"
    text: Final = "system_text"
    addOutputParam: Final = "system_addOutputParam"
    rawResponse: Final = "system_rawResponse"
    systemError: Final = "system_error"
    errorText: Final = "system_error_text"
    userFiles: Final = "userFiles"
    selectedTools: Final = "selectedTools"
    httpRawResponse: Final = "httpRawResponse"
    ifElseResult: Final = "ifElseResult"
    selectResult: Final = "selectResult"
    loopArray: Final = "loopArray"
    loopStartInput: Final = "loopStartInput"
    loopStartIndex: Final = "loopStartIndex"
    formInputResult: Final = "formInputResult"
    error: Final = "error"


#: ``valueType`` values (FastGPT ``WorkflowIOValueTypeEnum``): the tool layer's spelling, shared.
ValueType = WorkflowIOValueType


#: Render type that marks the dynamic-input collector (``FlowNodeInputTypeEnum.addInputParam``).
RENDER_ADD_INPUT_PARAM: Final = FlowNodeInputType.addInputParam

#: Keys passed to the dispatcher raw (no templating, no reference resolution).
RAW_INPUT_KEYS: Final = frozenset({NodeInputKey.childrenNodeIdList, NodeInputKey.httpJsonBody})

#: Variables the engine injects; stripped from the variables a run returns.
SYSTEM_VARIABLE_KEYS: Final = ("userId", "appId", "chatId", "responseChatItemId", "histories", "cTime")


def get_handle_id(node_id: str, handle_type: HandleType, key: str) -> str:
    """The handle id ``"{nodeId}-{type}-{key}"`` used on edges."""
    return f"{node_id}-{handle_type}-{key}"


def error_handle_id(node_id: str) -> str:
    """The ``catchError`` branch handle of a node."""
    return get_handle_id(node_id, "source_catch", "right")


def else_if_label(index: int) -> str:
    """The if-else branch label for condition ``index`` (``IF``, ``ELSE IF 1``, …)."""
    return "IF" if index == 0 else f"ELSE IF {index}"
