"""The workflow graph as FastGPT stores it: nodes, edges, chat config.

``load_workflow`` accepts the JSON text, a dict or a model, validates the structure (unknown node
types, duplicate ids, dangling edges, no entry node) and returns a :class:`WorkflowGraph` that dumps
back to the same JSON (unknown fields are kept).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from fathom.workflow.constants import ENTRY_NODE_TYPES, KNOWN_NODE_TYPES, FlowNodeType

_MODEL_CONFIG = ConfigDict(extra="allow", populate_by_name=True)
T = TypeVar("T")


class WorkflowGraphError(ValueError):
    """The workflow JSON is not a runnable graph. The message names the node or edge at fault."""


class NodeInput(BaseModel):
    """One node input (FastGPT ``FlowNodeInputItemType``); ``value`` may be a reference."""

    model_config = _MODEL_CONFIG

    key: str
    value: Any = None
    value_type: str | None = Field(default=None, alias="valueType")
    render_type_list: list[str] = Field(default_factory=list, alias="renderTypeList")
    label: str | None = None
    required: bool | None = None
    can_edit: bool | None = Field(default=None, alias="canEdit")


class NodeOutput(BaseModel):
    """One node output (FastGPT ``FlowNodeOutputItemType``); references use ``id``."""

    model_config = _MODEL_CONFIG

    key: str
    id: str | None = None
    value_type: str | None = Field(default=None, alias="valueType")
    type: str | None = None
    label: str | None = None
    required: bool | None = None
    default_value: Any = Field(default=None, alias="defaultValue")
    value: Any = None

    @property
    def ref_id(self) -> str:
        """The id references point at (``id``, falling back to ``key``)."""
        return self.id if self.id is not None else self.key


class WorkflowNode(BaseModel):
    """A stored node (FastGPT ``StoreNodeItemType``)."""

    model_config = _MODEL_CONFIG

    node_id: str = Field(alias="nodeId")
    flow_node_type: str = Field(alias="flowNodeType")
    name: str = ""
    avatar: str | None = None
    intro: str | None = None
    tool_description: str | None = Field(default=None, alias="toolDescription")
    show_status: bool | None = Field(default=None, alias="showStatus")
    parent_node_id: str | None = Field(default=None, alias="parentNodeId")
    inputs: list[NodeInput] = Field(default_factory=list)
    outputs: list[NodeOutput] = Field(default_factory=list)
    plugin_id: str | None = Field(default=None, alias="pluginId")
    version: str | None = None
    tool_config: Any = Field(default=None, alias="toolConfig")
    catch_error: bool | None = Field(default=None, alias="catchError")


class WorkflowEdge(BaseModel):
    """A stored edge; ``status`` appears only in runtime/memory edges."""

    model_config = _MODEL_CONFIG

    source: str
    target: str
    source_handle: str = Field(default="", alias="sourceHandle")
    target_handle: str = Field(default="", alias="targetHandle")
    status: str | None = None


class WorkflowGraph(BaseModel):
    """A whole workflow: ``nodes``, ``edges`` and optional ``chatConfig`` (kept as given)."""

    model_config = _MODEL_CONFIG

    nodes: list[WorkflowNode] = Field(default_factory=list)
    edges: list[WorkflowEdge] = Field(default_factory=list)
    chat_config: dict[str, Any] | None = Field(default=None, alias="chatConfig")

    _derived: dict[str, Any] = PrivateAttr(default_factory=dict)

    def derived(self, name: str, build: Callable[[], T]) -> T:
        """What ``build`` derives from this graph alone (no run's state), built on the first call and kept
        with the graph: a published version's loaded graph is shared by every chat of its app, and a
        graph is not changed once loaded (a run changes its own runtime copies)."""
        found = self._derived.get(name)
        if found is None:
            found = self._derived[name] = build()
        return found

    def node(self, node_id: str) -> WorkflowNode:
        """The node with this id (KeyError when absent)."""
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        raise KeyError(node_id)

    def to_dict(self) -> dict[str, Any]:
        """The graph as FastGPT JSON (only the fields that were given, with their original names)."""
        return self.model_dump(by_alias=True, exclude_unset=True, mode="json")


def _describe_edge(edge: WorkflowEdge, index: int) -> str:
    return f"edge #{index} ({edge.source}:{edge.source_handle} -> {edge.target}:{edge.target_handle})"


def _validate_graph(graph: WorkflowGraph, *, require_entry: bool = True) -> None:
    """Raise :class:`WorkflowGraphError` naming the first structural problem found."""
    seen: set[str] = set()
    for node in graph.nodes:
        if node.node_id in seen:
            raise WorkflowGraphError(f"duplicate node id '{node.node_id}'")
        seen.add(node.node_id)
        if node.flow_node_type not in KNOWN_NODE_TYPES:
            raise WorkflowGraphError(
                f"node '{node.node_id}' ({node.name or 'unnamed'}) "
                f"has unknown flowNodeType '{node.flow_node_type}'"
            )
    for index, edge in enumerate(graph.edges):
        if edge.source not in seen:
            raise WorkflowGraphError(
                f"{_describe_edge(edge, index)}: source node '{edge.source}' does not exist"
            )
        if edge.target not in seen:
            raise WorkflowGraphError(
                f"{_describe_edge(edge, index)}: target node '{edge.target}' does not exist"
            )
    if require_entry:
        types = {node.flow_node_type for node in graph.nodes}
        if not (types & ENTRY_NODE_TYPES) and FlowNodeType.tool not in types:
            raise WorkflowGraphError(
                "workflow has no entry node: add a workflowStart, pluginInput or userGuide node"
            )


def load_workflow(
    source: str | bytes | dict[str, Any] | WorkflowGraph, *, require_entry: bool = True
) -> WorkflowGraph:
    """Parse and validate FastGPT workflow JSON (text, dict or model) into a :class:`WorkflowGraph`."""
    if isinstance(source, WorkflowGraph):
        graph = source
    else:
        data: Any = source
        if isinstance(source, (str, bytes)):
            try:
                data = json.loads(source)
            except json.JSONDecodeError as exc:
                raise WorkflowGraphError(f"workflow is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise WorkflowGraphError("workflow must be a JSON object with 'nodes' and 'edges'")
        try:
            graph = WorkflowGraph.model_validate(data)
        except ValidationError as exc:
            raise WorkflowGraphError(_describe_validation_error(exc, data)) from exc
    _validate_graph(graph, require_entry=require_entry)
    return graph


def _describe_validation_error(exc: ValidationError, data: dict[str, Any]) -> str:
    first = exc.errors()[0]
    loc = first.get("loc", ())
    where = ".".join(str(part) for part in loc)
    if len(loc) >= 2 and loc[0] == "nodes" and isinstance(loc[1], int):
        nodes = data.get("nodes") or []
        node = nodes[loc[1]] if loc[1] < len(nodes) and isinstance(nodes[loc[1]], dict) else {}
        where = f"node '{node.get('nodeId', loc[1])}' field {'.'.join(str(p) for p in loc[2:])}"
    elif len(loc) >= 2 and loc[0] == "edges":
        where = f"edge #{loc[1]} field {'.'.join(str(p) for p in loc[2:])}"
    return f"invalid workflow: {where}: {first.get('msg', 'invalid')}"
