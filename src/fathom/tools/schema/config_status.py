"""Tool configuration status (spec §1.9, SRC `packages/global/core/app/formEdit/utils.ts`): does a tool
need the developer to fill in values, are the required ones filled, is the tool usable at all, and the
persisted `{key, mode}` form of an agent tool."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fathom.tools.schema.constants import (
    APP_TOOL_FORBIDDEN_RENDER_TYPES,
    FORM_RENDER_TYPES,
    FlowNodeInputType,
    NodeInputKey,
    ToolConfigStatus,
)
from fathom.tools.schema.input_modes import (
    can_input_be_agent_generated,
    init_tool_input_type_by_default_mode,
    is_agent_generated_tool_input,
)
from fathom.tools.schema.nodeio_types import FlowNodeInputItem, NodeInputLike, to_node_input, to_node_inputs

__all__ = [
    "ToolConfigStatusResult",
    "get_tool_config_status",
    "validate_tool_configuration",
]

_UNSET: Any = object()


def _is_generated(node_input: FlowNodeInputItem) -> bool:
    return is_agent_generated_tool_input(node_input) and can_input_be_agent_generated(node_input)


def _is_tool_input_value_configured(item: NodeInputLike, value: Any = _UNSET) -> bool:
    """`isToolInputValueConfigured`: value := `value ?? defaultValue`; null/''/[]/{} are not configured;
    a `timeRangeSelect` needs both ends."""
    node_input = to_node_input(item)
    if value is _UNSET:
        value = node_input.value
    if value is None:
        value = node_input.default_value
    if value is None or (isinstance(value, str) and value == ""):
        return False
    if FlowNodeInputType.timeRangeSelect in (node_input.render_type_list or []):
        return isinstance(value, list) and len(value) >= 2 and bool(value[0]) and bool(value[1])
    return not (isinstance(value, (list, tuple, dict)) and len(value) == 0)


def _has_form_control(node_input: FlowNodeInputItem) -> bool:
    return any(t in FORM_RENDER_TYPES for t in node_input.render_type_list or [])


def _check_needs_user_configuration(inputs: Iterable[NodeInputLike]) -> bool:
    """`checkNeedsUserConfiguration`: some input is not agent-generated, not forbid-stream, not history,
    and is the system config input or has a form control."""
    for node_input in to_node_inputs(inputs):
        normalized = init_tool_input_type_by_default_mode(node_input)
        if _is_generated(normalized):
            continue
        if node_input.key in (NodeInputKey.forbidStream, NodeInputKey.history):
            continue
        if node_input.key == NodeInputKey.systemInputConfig or _has_form_control(node_input):
            return True
    return False


@dataclass(frozen=True, slots=True)
class ToolConfigStatusResult:
    """`{needConfig, status}` with status `noConfig` | `configured` | `waitingForConfig`."""

    need_config: bool
    status: str


def get_tool_config_status(inputs: Iterable[NodeInputLike]) -> ToolConfigStatusResult:
    """`getToolConfigStatus`: only *required* form inputs (and the system config input) are checked."""
    items = to_node_inputs(inputs)
    if not _check_needs_user_configuration(items):
        return ToolConfigStatusResult(False, ToolConfigStatus.noConfig)
    to_check = []
    for node_input in items:
        if node_input.key in (NodeInputKey.forbidStream, NodeInputKey.history):
            continue
        if node_input.key == NodeInputKey.systemInputConfig:
            to_check.append(node_input)
            continue
        if _is_generated(init_tool_input_type_by_default_mode(node_input)):
            continue
        if node_input.required is True and _has_form_control(node_input):
            to_check.append(node_input)
    configured = all(_is_tool_input_value_configured(node_input) for node_input in to_check)
    status = ToolConfigStatus.configured if configured else ToolConfigStatus.waitingForConfig
    return ToolConfigStatusResult(not configured, status)


def validate_tool_configuration(
    inputs: Iterable[NodeInputLike], *, can_upload_file: bool = False, app_level: bool = True
) -> bool:
    """`validateToolConfiguration` (spec §1.9.4): false when an input selected as agent-generated may not
    be, a reference-only input has no `toolDescription`, or (app-level tool) a file input is not the only
    one with uploads enabled, or a dataset / model / custom-variable / add-param input is present."""
    items = to_node_inputs(inputs)
    file_inputs = [i for i in items if FlowNodeInputType.fileSelect in (i.render_type_list or [])]
    valid_file_input = len(file_inputs) == 1 and can_upload_file
    for node_input in items:
        render_types = node_input.render_type_list or []
        if is_agent_generated_tool_input(node_input):
            if can_input_be_agent_generated(node_input):
                continue
            return False
        if render_types == [FlowNodeInputType.reference] and not node_input.tool_description:
            return False
        if not app_level:
            continue
        if FlowNodeInputType.fileSelect in render_types and not valid_file_input:
            return False
        if any(t in APP_TOOL_FORBIDDEN_RENDER_TYPES - {FlowNodeInputType.fileSelect} for t in render_types):
            return False
    return True
