"""Which source a tool input may take its value from (spec §1.2): agent-generated, manual, or both.

These rules are the server-side safety boundary: whatever a persisted configuration says, an input with
a denied render type (file, password, model, dataset, hidden, ...) never enters a model schema.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fathom.tools.schema.constants import (
    AGENT_GENERATED_DENY_RENDER_TYPES,
    MANUAL_INPUT_RENDER_TYPES,
    FlowNodeInputType,
    NodeInputKey,
)
from fathom.tools.schema.nodeio_types import FlowNodeInputItem, NodeInputLike, to_node_input

__all__ = [
    "can_input_be_agent_generated",
    "can_input_be_manually_configured",
    "get_selected_input_render_type",
    "init_tool_input_type_by_default_mode",
    "is_agent_generated_tool_input",
]


def get_selected_input_render_type(item: NodeInputLike) -> str | None:
    """The chosen render type: `selectedType`, else `renderTypeList[selectedTypeIndex ?? 0]` (older data)."""
    node_input = to_node_input(item)
    if node_input.selected_type:
        return node_input.selected_type
    render_types = node_input.render_type_list
    if not isinstance(render_types, list):
        return None
    index = node_input.selected_type_index if node_input.selected_type_index is not None else 0
    return render_types[index] if 0 <= index < len(render_types) else None


def is_agent_generated_tool_input(item: NodeInputLike) -> bool:
    """Whether the input's selected render type is `agentGenerated`."""
    return get_selected_input_render_type(item) == FlowNodeInputType.agentGenerated


def can_input_be_agent_generated(item: NodeInputLike) -> bool:
    """`canInputBeAgentGenerated` (spec §1.2.1): false for `canAgentGenerated: false`, the system config
    and forbid-stream keys, a missing `renderTypeList`, or any denied render type."""
    node_input = to_node_input(item)
    if node_input.can_agent_generated is False:
        return False
    if node_input.key in (NodeInputKey.systemInputConfig, NodeInputKey.forbidStream):
        return False
    if not isinstance(node_input.render_type_list, list):
        return False
    return not any(t in AGENT_GENERATED_DENY_RENDER_TYPES for t in node_input.render_type_list)


def can_input_be_manually_configured(render_type_list: Iterable[str] | None) -> bool:
    """Whether any render type is a manual control (spec §1.2.2); `reference` is not one."""
    return any(t in MANUAL_INPUT_RENDER_TYPES for t in render_type_list or ())


def init_tool_input_type_by_default_mode(
    item: NodeInputLike, *, force_default_mode: bool = False
) -> FlowNodeInputItem:
    """Fix the default input source of a tool input the first time it is added (spec §1.2.6).

    An explicit selection (`selectedType` / `selectedTypeIndex`) wins unless `force_default_mode`;
    `isToolParam: true` (or the `userChatInput` key unless `isToolParam` is false) selects
    `agentGenerated`, prepending it to `renderTypeList` when missing. Denied inputs are never switched.
    """
    node_input = to_node_input(item)
    has_selection = node_input.selected_type is not None or node_input.selected_type_index is not None
    selected = get_selected_input_render_type(node_input)
    render_types = list(node_input.render_type_list or [])
    if has_selection and selected:
        update: dict[str, Any] = {"selected_type": selected}
        if selected in render_types:
            update["selected_type_index"] = render_types.index(selected)
        node_input = node_input.model_copy(update=update)
        node_input.model_fields_set.update(update)
    if has_selection and not force_default_mode:
        return node_input
    if not force_default_mode and is_agent_generated_tool_input(node_input):
        return node_input
    wants_agent = node_input.is_tool_param is True or (
        node_input.key == NodeInputKey.userChatInput and node_input.is_tool_param is not False
    )
    if not wants_agent or not can_input_be_agent_generated(node_input):
        return node_input
    if FlowNodeInputType.agentGenerated not in render_types:
        render_types = [FlowNodeInputType.agentGenerated, *render_types]
    update = {
        "selected_type": FlowNodeInputType.agentGenerated,
        "selected_type_index": render_types.index(FlowNodeInputType.agentGenerated),
        "render_type_list": render_types,
    }
    result = node_input.model_copy(update=update)
    result.model_fields_set.update(update)
    return result


def _generated_keys(inputs: Iterable[NodeInputLike]) -> set[str]:
    keys = set()
    for item in inputs:
        node_input = to_node_input(item)
        if is_agent_generated_tool_input(node_input) and can_input_be_agent_generated(node_input):
            keys.add(node_input.key)
    return keys
