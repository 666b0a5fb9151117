"""The tool-input runtime compiler (spec §1.1–§1.4): NodeIO inputs + raw JSON Schema → the model-facing
function tool, the whitelist of agent-generated keys, and the fixed input bindings; then the merge of
model arguments with those bindings.

Layers: `ToolInputDefinition` (raw property, NodeIO view, allowed modes) → `ToolInputConfiguration`
(final mode and binding) → `CompiledToolRuntime`. One compiler serves agents, workflow tool calls and
simple apps; plain workflow execution never goes through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fathom.tools.schema.constants import AgentToolInputMode, FlowNodeInputType
from fathom.tools.schema.input_modes import (
    can_input_be_agent_generated,
    can_input_be_manually_configured,
    get_selected_input_render_type,
    is_agent_generated_tool_input,
)
from fathom.tools.schema.nodeio_to_json_schema import (
    node_input_to_json_schema_property,
    strip_model_schema_annotations,
)
from fathom.tools.schema.nodeio_types import FlowNodeInputItem, NodeInputLike, to_node_inputs

__all__ = [
    "CompiledToolRuntime",
    "ToolInputConfiguration",
    "ToolInputConflictError",
    "ToolInputDefinition",
    "compile_tool_runtime",
    "merge_tool_runtime_params",
]

_ROOT_CONSTRAINTS_NOT_FOR_MODEL = frozenset(
    {"properties", "required", "allOf", "anyOf", "oneOf", "not", "if", "then", "else"}
    | {"dependentRequired", "dependentSchemas", "dependencies"}
)


class ToolInputConflictError(ValueError):
    """`Tool input {key} cannot be both generated and fixed`."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"Tool input {key} cannot be both generated and fixed")


@dataclass(slots=True)
class ToolInputDefinition:
    """One tool parameter: its raw JSON-Schema property (if any), NodeIO view and allowed modes."""

    key: str
    json_schema: dict[str, Any] | None
    node_input: FlowNodeInputItem
    allowed_modes: list[str]


@dataclass(slots=True)
class ToolInputConfiguration:
    """The final source of one parameter, and its fixed value when it has one (`has_binding`)."""

    key: str
    mode: str
    binding: Any = None
    has_binding: bool = False

    def to_wire(self) -> dict[str, Any]:
        """FastGPT shape `{key, mode, binding?}`."""
        wire: dict[str, Any] = {"key": self.key, "mode": self.mode}
        if self.has_binding:
            wire["binding"] = self.binding
        return wire


@dataclass(slots=True)
class CompiledToolRuntime:
    """Compiler output: the OpenAI function tool, the agent-generated key whitelist, the fixed bindings."""

    model_tool: dict[str, Any]
    agent_generated_keys: list[str]
    fixed_input_bindings: dict[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """FastGPT shape `{modelTool, agentGeneratedKeys, fixedInputBindings}`."""
        return {
            "modelTool": self.model_tool,
            "agentGeneratedKeys": list(self.agent_generated_keys),
            "fixedInputBindings": dict(self.fixed_input_bindings),
        }


def _schema_properties(json_schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    properties = json_schema.get("properties") if isinstance(json_schema, Mapping) else None
    return properties if isinstance(properties, Mapping) else {}


def _is_secret(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("isSecret") is True


def _create_tool_input_definitions(
    inputs: Iterable[NodeInputLike], json_schema: Mapping[str, Any] | None = None
) -> list[ToolInputDefinition]:
    """`createToolInputDefinitions` (spec §1.1.1, §1.2.3). A property marked `isSecret` is never
    agent-generatable, whatever its render types say."""
    properties = _schema_properties(json_schema)
    definitions: list[ToolInputDefinition] = []
    for node_input in to_node_inputs(inputs):
        raw = properties.get(node_input.key)
        schema = dict(raw) if isinstance(raw, Mapping) else node_input.custom_json_schema
        can_generate = can_input_be_agent_generated(node_input) and not _is_secret(schema)
        can_fix = (
            can_input_be_manually_configured(node_input.render_type_list)
            or get_selected_input_render_type(node_input) == FlowNodeInputType.reference
            or not can_generate
        )
        allowed = [AgentToolInputMode.agentGenerated] if can_generate else []
        if can_fix:
            allowed.append(AgentToolInputMode.manual)
        definitions.append(ToolInputDefinition(node_input.key, schema, node_input, allowed))
    return definitions


def _create_tool_input_configurations(
    definitions: Iterable[ToolInputDefinition],
) -> list[ToolInputConfiguration]:
    """`createToolInputConfigurations` (spec §1.1.2, §1.2.4, §1.2.7): requested mode from the selected
    render type, replaced by the first allowed mode when not allowed; binding = `value` when present
    (even null), else `defaultValue`."""
    configurations: list[ToolInputConfiguration] = []
    for definition in definitions:
        node_input = definition.node_input
        requested = (
            AgentToolInputMode.agentGenerated
            if is_agent_generated_tool_input(node_input)
            else AgentToolInputMode.manual
        )
        if requested in definition.allowed_modes:
            mode = requested
        else:
            mode = definition.allowed_modes[0] if definition.allowed_modes else AgentToolInputMode.manual
        if node_input.has("value"):
            binding, has_binding = node_input.value, True
        else:
            binding, has_binding = node_input.default_value, node_input.has("default_value")
        configurations.append(ToolInputConfiguration(definition.key, mode, binding, has_binding))
    return configurations


def _build_model_visible_tool_json_schema(
    definitions: Iterable[ToolInputDefinition],
    generated_keys: Iterable[str],
    json_schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The model-visible parameter schema: generated inputs (raw property, else NodeIO projection) plus
    raw properties marked `isToolParam: true` that no NodeIO input claims; secrets never; `required`
    restricted to those keys; annotations stripped at every level."""
    by_key = {definition.key: definition for definition in definitions}
    generated = [key for key in generated_keys if key in by_key]
    properties: dict[str, Any] = {}
    for key in generated:
        definition = by_key[key]
        schema = definition.json_schema
        properties[key] = (
            dict(schema) if schema is not None else node_input_to_json_schema_property(definition.node_input)
        )
    for key, raw in _schema_properties(json_schema).items():
        if key in by_key or key in properties or not isinstance(raw, Mapping):
            continue
        if raw.get("isToolParam") is True and not _is_secret(raw):
            properties[key] = dict(raw)
    if isinstance(json_schema, Mapping):
        source_required = json_schema.get("required")
        original = [str(k) for k in source_required] if isinstance(source_required, list) else []
        model_schema = {k: v for k, v in json_schema.items() if k not in _ROOT_CONSTRAINTS_NOT_FOR_MODEL}
    else:
        original = [key for key in generated if by_key[key].node_input.required]
        model_schema = {"type": "object"}
    model_schema["properties"] = properties
    required = [key for key in original if key in properties]
    if required:
        model_schema["required"] = required
    stripped: dict[str, Any] = strip_model_schema_annotations(model_schema)
    return stripped


def compile_tool_runtime(
    tool_id: str,
    name: str,
    description: str | None = None,
    inputs: Iterable[NodeInputLike] = (),
    json_schema: Mapping[str, Any] | None = None,
    fixed_input_bindings: Mapping[str, Any] | None = None,
) -> CompiledToolRuntime:
    """`compileToolRuntime` (spec §1.3). `parameters` is omitted when nothing is agent-generated.
    Raises `ToolInputConflictError` when a fixed key is also generated."""
    definitions = _create_tool_input_definitions(inputs, json_schema)
    configurations = _create_tool_input_configurations(definitions)
    generated = [
        definition.key
        for definition, configuration in zip(definitions, configurations, strict=True)
        if configuration.mode == AgentToolInputMode.agentGenerated
        and AgentToolInputMode.agentGenerated in definition.allowed_modes
    ]
    parameters = _build_model_visible_tool_json_schema(definitions, generated, json_schema)
    agent_generated_keys = list(parameters.get("properties", {}))
    fixed = dict(fixed_input_bindings or {})
    for configuration in configurations:
        if configuration.mode == AgentToolInputMode.manual and configuration.has_binding:
            fixed[configuration.key] = configuration.binding
    _check_conflicts(agent_generated_keys, fixed)
    function: dict[str, Any] = {
        "name": tool_id,
        "description": ": ".join(part for part in (name, description) if part),
    }
    if agent_generated_keys:
        function["parameters"] = parameters
    return CompiledToolRuntime(
        model_tool={"type": "function", "function": function},
        agent_generated_keys=agent_generated_keys,
        fixed_input_bindings=fixed,
    )


def _check_conflicts(agent_generated_keys: Iterable[str], fixed_input_bindings: Mapping[str, Any]) -> None:
    generated = set(agent_generated_keys)
    for key in fixed_input_bindings:
        if key in generated:
            raise ToolInputConflictError(key)


def merge_tool_runtime_params(
    agent_generated_keys: Iterable[str],
    fixed_input_bindings: Mapping[str, Any],
    ai_params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`mergeToolRuntimeParams` (spec §1.4): fixed bindings, then the model's arguments restricted to the
    whitelist (unknown keys dropped; the model cannot override a fixed key)."""
    keys = list(agent_generated_keys)
    _check_conflicts(keys, fixed_input_bindings)
    allowed = set(keys)
    merged = dict(fixed_input_bindings)
    merged.update({key: value for key, value in (ai_params or {}).items() if key in allowed})
    return merged
