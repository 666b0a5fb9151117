"""Pydantic models of FastGPT's NodeIO wire format (node inputs, outputs, option lists, config forms).

Attributes are snake_case; the wire keys are FastGPT's camelCase (`renderTypeList`, `selectedTypeIndex`,
`valueType`, `defaultValue`, `toolDescription`, `isToolParam`, `customJsonSchema`, ...). Unknown keys are
kept (`extra="allow"`), so `model_dump(by_alias=True, exclude_unset=True)` gives back the JSON that was
loaded. The workflow engine reuses these models: import them from `fathom.tools.schema`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

Number: TypeAlias = int | float


class _WireModel(BaseModel):
    """Base: camelCase aliases, populate by attribute name too, unknown FastGPT keys kept as they are."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        alias_generator=to_camel,
        protected_namespaces=(),
    )

    def to_wire(self) -> dict[str, Any]:
        """The FastGPT JSON of this item: camelCase keys, only the keys that were set."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")

    def has(self, attribute: str) -> bool:
        """Whether the attribute (snake_case name) was present in the loaded data, even as null."""
        return attribute in self.model_fields_set


class SelectOption(_WireModel):
    """One `{label, value}` option of a select / multipleSelect input (`list[]`)."""

    label: Any = None
    value: Any = None
    description: str | None = None


class EnumOption(_WireModel):
    """One `{value, label?}` entry of a NodeIO `enums[]`."""

    value: Any = None
    label: Any = None


SelectOptions: TypeAlias = list[SelectOption]
EnumOptions: TypeAlias = list[EnumOption]


class FlowNodeInputItem(_WireModel):
    """A node input (`FlowNodeInputItemType`)."""

    key: str
    render_type_list: list[str] | None = None
    selected_type_index: int | None = None
    selected_type: str | None = None
    value_type: str | None = None
    value_desc: str | None = None
    value: Any = None
    default_value: Any = None
    label: str | None = None
    debug_label: str | None = None
    description: str | None = None
    placeholder: str | None = None
    required: bool | None = None
    tool_description: str | None = None
    is_tool_param: bool | None = None
    can_agent_generated: bool | None = None
    can_edit: bool | None = None
    is_pro: bool | None = None
    is_tool_output: bool | None = None
    deprecated: bool | None = None
    options: SelectOptions | None = Field(default=None, alias="list")
    enums: EnumOptions | None = None
    enum: str | None = None
    custom_json_schema: dict[str, Any] | None = None
    custom_input_config: dict[str, Any] | None = None
    max: Number | None = None
    min: Number | None = None
    step: Number | None = None
    max_length: int | None = None
    min_length: int | None = None
    llm_model_type: str | None = None
    reference_placeholder: str | None = None


class FlowNodeOutputItem(_WireModel):
    """A node output (`FlowNodeOutputItemType`)."""

    key: str
    id: str | None = None
    type: str | None = None
    label: str | None = None
    description: str | None = None
    value_type: str | None = None
    value_desc: str | None = None
    value: Any = None
    default_value: Any = None
    required: bool | None = None
    tool_description: str | None = None
    invalid: bool | None = None
    deprecated: bool | None = None
    custom_field_config: dict[str, Any] | None = None


class InputConfigItem(_WireModel):
    """One field of a tool's secret / config form (`InputConfigType`)."""

    key: str
    input_type: str | None = None
    label: str | None = None
    description: str | None = None
    required: bool | None = None
    value: Any = None
    options: SelectOptions | None = Field(default=None, alias="list")


NodeInputLike: TypeAlias = FlowNodeInputItem | Mapping[str, Any]
NodeOutputLike: TypeAlias = FlowNodeOutputItem | Mapping[str, Any]
InputConfigLike: TypeAlias = InputConfigItem | Mapping[str, Any]


def to_node_input(item: NodeInputLike) -> FlowNodeInputItem:
    """A node input as a model, from a model or a FastGPT wire dict."""
    if isinstance(item, FlowNodeInputItem):
        return item
    return FlowNodeInputItem.model_validate(dict(item))


def to_node_inputs(items: Iterable[NodeInputLike] | None) -> list[FlowNodeInputItem]:
    """Several node inputs as models."""
    return [to_node_input(item) for item in items or ()]
