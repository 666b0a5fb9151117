"""Node input resolution (FastGPT ``getNodeRunParams``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fathom.workflow.constants import RAW_INPUT_KEYS, RENDER_ADD_INPUT_PARAM, FlowNodeType
from fathom.workflow.runtime import RuntimeNode
from fathom.workflow.values import value_type_format
from fathom.workflow.variables import get_reference_variable_value, replace_editor_variable


def get_node_params(
    node: RuntimeNode, nodes: Mapping[str, RuntimeNode], variables: Mapping[str, Any]
) -> dict[str, Any]:
    """Each input: templates, then references, then ``valueTypeFormat``. ``pluginInput`` inputs are
    only formatted; ``childrenNodeIdList``/``system_httpJsonBody`` pass raw; the first
    ``addInputParam`` input collects every ``canEdit`` input."""
    if node.flow_node_type == FlowNodeType.pluginInput:
        return {item.key: value_type_format(item.value, item.value_type) for item in node.inputs}
    dynamic = next(
        (i for i in node.inputs if i.render_type_list and i.render_type_list[0] == RENDER_ADD_INPUT_PARAM),
        None,
    )
    params: dict[str, Any] = {dynamic.key: {}} if dynamic else {}
    for item in node.inputs:
        if dynamic is not None and item.key == dynamic.key:
            continue
        if item.key in RAW_INPUT_KEYS:
            params[item.key] = item.value
            continue
        value = replace_editor_variable(item.value, nodes, variables)
        value = get_reference_variable_value(value, nodes, variables)
        formatted = value_type_format(value, item.value_type)
        if item.can_edit and dynamic is not None:
            params[dynamic.key][item.key] = formatted
        params[item.key] = formatted
    return params
