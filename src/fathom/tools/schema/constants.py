"""FastGPT vocabulary for node inputs and outputs: render types, value types, keys, modes.

Every constant keeps FastGPT's exact string spelling (SRC `packages/global/core/workflow/node/constant.ts`,
`packages/global/core/workflow/constants.ts`, `packages/global/core/app/tool/constants.ts`), so workflow JSON
exported from FastGPT loads unchanged.
"""

from __future__ import annotations

from typing import Any, Final


class FlowNodeInputType:
    """Render types of a node input (`FlowNodeInputTypeEnum`); `renderTypeList` holds these strings."""

    reference: Final = "reference"
    input: Final = "input"
    textarea: Final = "textarea"
    numberInput: Final = "numberInput"
    switch: Final = "switch"
    select: Final = "select"
    multipleSelect: Final = "multipleSelect"
    JSONEditor: Final = "JSONEditor"
    addInputParam: Final = "addInputParam"
    customVariable: Final = "customVariable"
    selectApp: Final = "selectApp"
    selectLLMModel: Final = "selectLLMModel"
    settingLLMModel: Final = "settingLLMModel"
    selectDataset: Final = "selectDataset"
    selectDatasetParamsModal: Final = "selectDatasetParamsModal"
    settingDatasetQuotePrompt: Final = "settingDatasetQuotePrompt"
    hidden: Final = "hidden"
    custom: Final = "custom"
    selectSkill: Final = "selectSkill"
    selectTool: Final = "selectTool"
    fileSelect: Final = "fileSelect"
    timePointSelect: Final = "timePointSelect"
    timeRangeSelect: Final = "timeRangeSelect"
    password: Final = "password"
    tagFilterConfig: Final = "tagFilterConfig"
    off: Final = "off"
    agentGenerated: Final = "agentGenerated"


class FlowNodeOutputType:
    """Output kinds of a node (`FlowNodeOutputTypeEnum`)."""

    hidden: Final = "hidden"
    error: Final = "error"
    source: Final = "source"
    static: Final = "static"
    dynamic: Final = "dynamic"


class WorkflowIOValueType:
    """Value types of node inputs and outputs (`WorkflowIOValueTypeEnum`)."""

    string: Final = "string"
    number: Final = "number"
    boolean: Final = "boolean"
    object: Final = "object"
    arrayString: Final = "arrayString"
    arrayNumber: Final = "arrayNumber"
    arrayBoolean: Final = "arrayBoolean"
    arrayObject: Final = "arrayObject"
    arrayAny: Final = "arrayAny"
    any: Final = "any"
    chatHistory: Final = "chatHistory"
    datasetQuote: Final = "datasetQuote"
    dynamic: Final = "dynamic"
    selectDataset: Final = "selectDataset"
    selectApp: Final = "selectApp"


class InputConfigInputType:
    """Input kinds of a tool secret / config form (`InputConfigInputTypeEnum`)."""

    input: Final = "input"
    numberInput: Final = "numberInput"
    secret: Final = "secret"
    switch: Final = "switch"
    select: Final = "select"


class NodeInputKey:
    """The few node input keys the tool runtime treats specially (`NodeInputKeyEnum`)."""

    history: Final = "history"
    userChatInput: Final = "userChatInput"
    forbidStream: Final = "system_forbid_stream"
    systemInputConfig: Final = "system_input_config"
    headerSecret: Final = "system_header_secret"


class AgentToolInputMode:
    """Where a tool input's value comes from (`AgentToolInputModeEnum`)."""

    agentGenerated: Final = "agentGenerated"
    manual: Final = "manual"


class ToolConfigStatus:
    """Result of `get_tool_config_status`."""

    noConfig: Final = "noConfig"
    configured: Final = "configured"
    waitingForConfig: Final = "waitingForConfig"


class AppToolSource:
    """Tool sources (`AppToolSourceEnum`); `community` is deprecated and maps to `systemTool`."""

    personal: Final = "personal"
    systemTool: Final = "systemTool"
    commercial: Final = "commercial"
    mcp: Final = "mcp"
    http: Final = "http"
    community: Final = "community"


SCHEMA_TYPES: Final = ("mcp", "http", "systemTool")
"""Accepted `schema_type` values of `json_schema_to_node_inputs`."""

AGENT_GENERATED_DENY_RENDER_TYPES: Final[frozenset[str]] = frozenset(
    {
        FlowNodeInputType.fileSelect,
        FlowNodeInputType.password,
        FlowNodeInputType.selectLLMModel,
        FlowNodeInputType.settingLLMModel,
        FlowNodeInputType.hidden,
        FlowNodeInputType.customVariable,
        FlowNodeInputType.custom,
        FlowNodeInputType.addInputParam,
        FlowNodeInputType.selectApp,
        FlowNodeInputType.selectSkill,
        FlowNodeInputType.selectTool,
        FlowNodeInputType.selectDataset,
        FlowNodeInputType.selectDatasetParamsModal,
        FlowNodeInputType.settingDatasetQuotePrompt,
    }
)
"""An input whose `renderTypeList` contains any of these never enters a model schema (spec §1.2.1)."""

MANUAL_INPUT_RENDER_TYPES: Final[frozenset[str]] = frozenset(
    {
        FlowNodeInputType.input,
        FlowNodeInputType.textarea,
        FlowNodeInputType.numberInput,
        FlowNodeInputType.switch,
        FlowNodeInputType.select,
        FlowNodeInputType.multipleSelect,
        FlowNodeInputType.JSONEditor,
        FlowNodeInputType.timePointSelect,
        FlowNodeInputType.timeRangeSelect,
        FlowNodeInputType.password,
    }
)
"""Render types that are a manual control (spec §1.2.2); `reference` is wiring, not a control."""

FORM_RENDER_TYPES: Final[frozenset[str]] = MANUAL_INPUT_RENDER_TYPES
"""Render types that make a tool need user configuration (`formRenderTypesMap`, spec §1.9.2)."""

APP_TOOL_FORBIDDEN_RENDER_TYPES: Final[frozenset[str]] = frozenset(
    {
        FlowNodeInputType.selectDataset,
        FlowNodeInputType.addInputParam,
        FlowNodeInputType.selectLLMModel,
        FlowNodeInputType.settingLLMModel,
        FlowNodeInputType.fileSelect,
        FlowNodeInputType.customVariable,
    }
)
"""Render types an app-level tool may not carry (spec §1.9.4)."""

TOOL_VALUE_TYPE_JSON_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    WorkflowIOValueType.string: {"type": "string"},
    WorkflowIOValueType.number: {"type": "number"},
    WorkflowIOValueType.boolean: {"type": "boolean"},
    WorkflowIOValueType.arrayString: {"type": "array", "items": {"type": "string"}},
    WorkflowIOValueType.arrayNumber: {"type": "array", "items": {"type": "number"}},
    WorkflowIOValueType.arrayBoolean: {"type": "array", "items": {"type": "boolean"}},
    WorkflowIOValueType.object: {"type": "object"},
    WorkflowIOValueType.arrayObject: {"type": "array", "items": {"type": "object"}},
}
"""`valueTypeJsonSchemaMap`: the standard value type → JSON Schema map; the first entry is the fallback."""
