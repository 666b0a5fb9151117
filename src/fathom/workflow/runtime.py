"""Per-run mutable state built from a :class:`WorkflowGraph`: runtime nodes (with output values)
and runtime edges (with ``waiting | active | skipped`` status).

A graph is immutable and shared between runs; each run builds its own runtime copies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fathom.json_values import copy_json
from fathom.workflow.constants import (
    ENTRY_NODE_TYPES,
    FlowNodeType,
    NodeOutputKey,
)
from fathom.workflow.graph import WorkflowEdge, WorkflowGraph, WorkflowNode
from fathom.workflow.values import js_truthy


@dataclass(slots=True)
class RuntimeInput:
    """A node input during a run (``value`` may be rewritten, e.g. by the loop node)."""

    key: str
    value: Any
    value_type: str | None
    render_type_list: list[str]
    can_edit: bool


@dataclass(slots=True)
class RuntimeOutput:
    """A node output during a run; ``value`` is filled when the node runs."""

    id: str
    key: str
    value_type: str | None
    required: bool
    default_value: Any
    value: Any = None


@dataclass(slots=True)
class RuntimeNode:
    """A node during a run."""

    node_id: str
    name: str
    flow_node_type: str
    inputs: list[RuntimeInput]
    outputs: list[RuntimeOutput]
    show_status: bool
    catch_error: bool
    plugin_id: str | None
    version: str | None
    parent_node_id: str | None
    source: WorkflowNode
    is_entry: bool = False
    outputs_by_id: dict[str, RuntimeOutput] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.outputs_by_id = {output.id: output for output in self.outputs}

    def input(self, key: str) -> RuntimeInput | None:
        """The input with this key, if any."""
        for item in self.inputs:
            if item.key == key:
                return item
        return None

    def output_values(self) -> dict[str, Any]:
        """Current output values by key (unset outputs omitted)."""
        return {output.key: output.value for output in self.outputs if output.value is not None}


@dataclass(slots=True)
class RuntimeEdge:
    """An edge during a run."""

    source: str
    source_handle: str
    target: str
    target_handle: str
    status: str = "waiting"

    def to_dict(self) -> dict[str, Any]:
        """FastGPT's runtime edge JSON."""
        return {
            "source": self.source,
            "sourceHandle": self.source_handle,
            "target": self.target,
            "targetHandle": self.target_handle,
            "status": self.status,
        }

    @classmethod
    def from_any(cls, edge: Any) -> RuntimeEdge:
        """Build from a stored edge model, a runtime edge or a FastGPT edge dict."""
        if isinstance(edge, RuntimeEdge):
            return cls(edge.source, edge.source_handle, edge.target, edge.target_handle, edge.status)
        if isinstance(edge, WorkflowEdge):
            return cls(
                edge.source, edge.source_handle, edge.target, edge.target_handle, edge.status or "waiting"
            )
        return cls(
            edge["source"],
            edge.get("sourceHandle", ""),
            edge["target"],
            edge.get("targetHandle", ""),
            edge.get("status") or "waiting",
        )


def is_control_edge(edge: RuntimeEdge) -> bool:
    """False for ``selectedTools`` edges, which attach tools to a Tool Call node (not control flow)."""
    return (
        edge.source_handle != NodeOutputKey.selectedTools
        and edge.target_handle != NodeOutputKey.selectedTools
    )


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _changeable(value: Any) -> bool:
    """Whether a run could change the value in place (a run gets its own copy of such a value)."""
    return type(value) not in _SCALARS


@dataclass(frozen=True, slots=True)
class _NodeTemplate:
    """A stored node as its runs copy it: the fields read once, each value marked for copying when a run
    could change it in place. Made once per loaded graph (``WorkflowGraph.derived``)."""

    node: WorkflowNode
    # (key, value, copy it, value type, render types, can edit)
    inputs: tuple[tuple[str, Any, bool, str | None, tuple[str, ...], bool], ...]
    # (id, key, value type, required, default value, copy it, value, copy it)
    outputs: tuple[tuple[str, str, str | None, bool, Any, bool, Any, bool], ...]

    @classmethod
    def of(cls, node: WorkflowNode) -> _NodeTemplate:
        return cls(
            node,
            tuple(
                (
                    item.key,
                    item.value,
                    _changeable(item.value),
                    item.value_type,
                    tuple(item.render_type_list),
                    bool(item.can_edit),
                )
                for item in node.inputs
            ),
            tuple(
                (
                    item.ref_id,
                    item.key,
                    item.value_type,
                    bool(item.required),
                    item.default_value,
                    _changeable(item.default_value),
                    item.value,
                    _changeable(item.value),
                )
                for item in node.outputs
            ),
        )

    def build(self) -> RuntimeNode:
        node = self.node
        return RuntimeNode(
            node.node_id,
            node.name,
            node.flow_node_type,
            [
                RuntimeInput(key, copy_json(value) if copied else value, value_type, list(render), can_edit)
                for key, value, copied, value_type, render, can_edit in self.inputs
            ],
            [
                RuntimeOutput(
                    ref_id,
                    key,
                    value_type,
                    required,
                    copy_json(default) if default_copied else default,
                    copy_json(value) if copied else value,
                )
                for ref_id, key, value_type, required, default, default_copied, value, copied in self.outputs
            ],
            bool(node.show_status),
            bool(node.catch_error),
            node.plugin_id,
            node.version,
            node.parent_node_id,
            node,
        )


def build_runtime_node(node: WorkflowNode) -> RuntimeNode:
    """A fresh runtime copy of a stored node: its values are copies, so a run that changes one in
    place leaves the graph (shared by every run of a published version) as it was."""
    return _NodeTemplate.of(node).build()


def build_runtime_nodes(graph: WorkflowGraph) -> dict[str, RuntimeNode]:
    """Runtime nodes of a graph, by id, in graph order, each as :func:`build_runtime_node` makes it, from
    templates the graph's first run makes (what a run never changes is read from the graph once)."""
    templates = graph.derived("runtime_node_templates", lambda: [_NodeTemplate.of(n) for n in graph.nodes])
    return {template.node.node_id: template.build() for template in templates}


def build_runtime_edges(edges: Iterable[Any]) -> list[RuntimeEdge]:
    """Runtime edges (status kept when given, else ``waiting``)."""
    return [RuntimeEdge.from_any(edge) for edge in edges]


def default_entry_node_ids(graph: WorkflowGraph) -> list[str]:
    """Entry nodes of a fresh run: start-type nodes, else single ``tool`` nodes."""
    entries = [node.node_id for node in graph.nodes if node.flow_node_type in ENTRY_NODE_TYPES]
    if entries:
        return entries
    return [node.node_id for node in graph.nodes if node.flow_node_type == FlowNodeType.tool]


def get_workflow_entry_node_ids(
    graph: WorkflowGraph, last_interactive: Mapping[str, Any] | None = None
) -> list[str]:
    """FastGPT ``getWorkflowEntryNodeIds``: a resumed interactive's ``entryNodeIds`` when it names any,
    else the entry nodes of a fresh run."""
    resumed = list((last_interactive or {}).get("entryNodeIds") or [])
    return resumed or default_entry_node_ids(graph)


def store_edges_to_runtime_edges(
    edges: Iterable[Any] | None, last_interactive: Mapping[str, Any] | None = None
) -> list[RuntimeEdge]:
    """FastGPT ``storeEdges2RuntimeEdges``: a resumed interactive's ``memoryEdges`` (with their
    statuses) when it has any, else the stored edges, all ``waiting``."""
    memory = (last_interactive or {}).get("memoryEdges") or []
    if memory:
        return build_runtime_edges(memory)
    runtime = build_runtime_edges(edges or [])
    for edge in runtime:
        edge.status = "waiting"
    return runtime


def rewrite_node_output_by_histories(
    nodes: Mapping[str, RuntimeNode], last_interactive: Mapping[str, Any] | None = None
) -> None:
    """FastGPT ``rewriteNodeOutputByHistories``: a resumed interactive's ``nodeOutputs`` (``{nodeId, key,
    value}``) become the outputs of the nodes that ran before the pause; empty values are not written."""
    for item in (last_interactive or {}).get("nodeOutputs") or []:
        node = nodes.get(item.get("nodeId", ""))
        if node is None or not js_truthy(item.get("value")):
            continue
        for output in node.outputs:
            if output.key == item.get("key"):
                output.value = item["value"]
