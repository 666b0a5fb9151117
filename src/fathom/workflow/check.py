"""Workflow checks before publishing (FastGPT's ``checkWorkflowNodeAndConnection``, made a server rule).

:func:`check_workflow_graph` lists every problem of a loaded graph as ``{nodeId, field, problem,
level}``. ``error`` problems make a run go wrong in a way the user would not see (a node nothing
reaches, a required input left empty, a reference to a node or output that does not exist, a cycle
that never ends); publishing is refused while any remain. ``warning`` problems run, but not as the
author may think (a model that is not configured falls back to the default chat model, a knowledge
base search with no knowledge base selected, a reference whose type is converted).

FastGPT's rules, as its editor applies them before publishing:

- every node but the start, config and comment nodes is reachable from the start node (loop bodies
  from their own start node);
- required inputs are set (``any`` and ``boolean`` inputs, and the inputs of a node a tool-calling
  node uses as a tool, are exempt); a reference resolves to an existing node's output;
- if/else conditions are complete, a user-select node has options, a form has fields; a tool-call
  node has at least one tool (a warning here: without one it still answers, as a plain model call).

Fathom adds: references of any input (not only required ones) and ``{{$node.output$}}`` text
references must resolve; a referenced node should run before the reader (upstream) and give a
value of a compatible type (warnings); a cycle with no branch node in it never ends; model ids are
checked against the configured models.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from fathom.workflow.constants import VARIABLE_NODE_ID, FlowNodeType, NodeInputKey
from fathom.workflow.graph import NodeInput, WorkflowGraph, WorkflowNode
from fathom.workflow.variables import is_reference

Level = Literal["error", "warning"]

#: nodes outside the flow (settings, notes): never checked for connections
_OUTSIDE_FLOW = frozenset(
    {
        FlowNodeType.systemConfig,
        FlowNodeType.pluginConfig,
        FlowNodeType.comment,
        FlowNodeType.globalVariable,
        FlowNodeType.emptyNode,
    }
)
#: where a run (or a loop body's run) starts
_STARTS = frozenset(
    {
        FlowNodeType.workflowStart,
        FlowNodeType.pluginInput,
        FlowNodeType.loopStart,
        FlowNodeType.loopRunStart,
    }
)
#: where a whole run starts (a graph without one is a tool-only graph)
_RUN_STARTS = frozenset({FlowNodeType.workflowStart, FlowNodeType.pluginInput})
#: nodes that choose among their outgoing edges or pause for the user: a cycle through one can end
_BRANCHING = frozenset(
    {
        FlowNodeType.ifElseNode,
        FlowNodeType.classifyQuestion,
        FlowNodeType.userSelect,
        FlowNodeType.formInput,
        FlowNodeType.agent,
    }
)
#: nodes whose inputs describe what the run receives, not what it needs (FastGPT skips them too)
_INPUTS_UNCHECKED = frozenset({FlowNodeType.workflowStart, FlowNodeType.pluginInput})
_EXEMPT_VALUE_TYPES = frozenset({"any", "boolean"})
_LLM_RENDER_TYPES = frozenset({"settingLLMModel", "selectLLMModel"})
_TEXT_REFERENCE = re.compile(r"\{\{\$([^.$]+)\.([^$]+)\$\}\}")
_SELECTED_TOOLS = "selectedTools"

#: which output value types an input of each value type accepts (FastGPT
#: ``filterWorkflowNodeOutputsByType``); ``any``/``arrayAny`` inputs and untyped outputs accept all
_ACCEPTS: dict[str, frozenset[str]] = {
    "string": frozenset({"string"}),
    "number": frozenset({"number"}),
    "boolean": frozenset({"boolean"}),
    "object": frozenset({"object"}),
    "arrayString": frozenset({"string", "arrayString", "arrayAny"}),
    "arrayNumber": frozenset({"number", "arrayNumber", "arrayAny"}),
    "arrayBoolean": frozenset({"boolean", "arrayBoolean", "arrayAny"}),
    "arrayObject": frozenset(
        {"object", "arrayObject", "arrayAny", "chatHistory", "datasetQuote", "dynamic", "selectDataset"}
        | {"selectApp"}
    ),
    "chatHistory": frozenset({"chatHistory", "arrayAny"}),
    "datasetQuote": frozenset({"datasetQuote", "arrayAny"}),
    "dynamic": frozenset({"dynamic", "arrayAny"}),
    "selectDataset": frozenset({"selectDataset", "arrayAny"}),
    "selectApp": frozenset({"selectApp", "arrayAny"}),
}


@dataclass(frozen=True)
class WorkflowProblem:
    """One problem: the node, the input key (``""`` for the node itself) and what to fix."""

    node_id: str
    field: str
    problem: str
    level: Level = "error"

    def to_dict(self) -> dict[str, str]:
        return {"nodeId": self.node_id, "field": self.field, "problem": self.problem, "level": self.level}


@dataclass(frozen=True)
class ModelCatalog:
    """The chat models a run can use: their ids and the default a node falls back to (None: none)."""

    chat_models: Collection[str]
    default_chat_model: str | None


def has_errors(problems: Iterable[WorkflowProblem]) -> bool:
    """Whether any problem blocks publishing."""
    return any(problem.level == "error" for problem in problems)


def describe_problems(graph: WorkflowGraph, problems: list[WorkflowProblem]) -> str:
    """One line per problem, naming the node by its name and id (for error messages and logs)."""
    names = {node.node_id: node.name or node.flow_node_type for node in graph.nodes}
    lines = []
    for item in problems:
        where = f"node '{names.get(item.node_id, item.node_id)}' ({item.node_id})"
        field = f" {item.field}:" if item.field else ":"
        lines.append(f"{where}{field} {item.problem}")
    return "; ".join(lines)


def check_workflow_graph(
    graph: WorkflowGraph, *, models: ModelCatalog | None = None
) -> list[WorkflowProblem]:
    """Every problem of ``graph`` (already structurally valid, see :func:`load_workflow`), in node order."""
    checker = _Checker(graph, models)
    return checker.run()


class _Checker:
    def __init__(self, graph: WorkflowGraph, models: ModelCatalog | None) -> None:
        self.graph = graph
        self.models = models
        self.nodes = {node.node_id: node for node in graph.nodes}
        self.problems: list[WorkflowProblem] = []
        self.outgoing: dict[str, list[str]] = {node_id: [] for node_id in self.nodes}
        self.incoming: dict[str, list[str]] = {node_id: [] for node_id in self.nodes}
        self.tool_targets: set[str] = set()
        for edge in graph.edges:
            self.outgoing.setdefault(edge.source, []).append(edge.target)
            self.incoming.setdefault(edge.target, []).append(edge.source)
            if edge.target_handle == _SELECTED_TOOLS or edge.source_handle.endswith(f"-{_SELECTED_TOOLS}"):
                self.tool_targets.add(edge.target)
        self._ancestors: dict[str, set[str]] = {}

    def add(self, node: WorkflowNode, field: str, problem: str, level: Level = "error") -> None:
        self.problems.append(WorkflowProblem(node.node_id, field, problem, level))

    def run(self) -> list[WorkflowProblem]:
        unreachable = self._unreachable()
        for node in self.graph.nodes:
            if node.flow_node_type in _OUTSIDE_FLOW:
                continue
            if node.node_id in unreachable and node.flow_node_type == FlowNodeType.loopEnd:
                self.add(
                    node,
                    "",
                    "not connected: the loop body never reaches its end node, so the loop collects no "
                    "results",
                    "warning",
                )
            elif node.node_id in unreachable:
                self.add(
                    node,
                    "",
                    "not connected: no path from the start node reaches it, so it never runs; "
                    "connect it to the flow or delete it",
                )
            if node.flow_node_type not in _INPUTS_UNCHECKED:
                self._check_node(node)
        self._check_cycles()
        order = {node.node_id: index for index, node in enumerate(self.graph.nodes)}
        return sorted(self.problems, key=lambda p: order.get(p.node_id, len(order)))

    # connections -------------------------------------------------------------------------------

    def _unreachable(self) -> set[str]:
        starts = [n.node_id for n in self.graph.nodes if n.flow_node_type in _STARTS]
        if not any(self.nodes[s].flow_node_type in _RUN_STARTS for s in starts):
            return set()  # a tool-only graph: the engine's own entry rules apply
        seen: set[str] = set()
        stack = list(starts)
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            stack.extend(self.outgoing.get(current, ()))
        return {
            node.node_id
            for node in self.graph.nodes
            if node.node_id not in seen and node.flow_node_type not in _OUTSIDE_FLOW | _STARTS
        }

    def _check_cycles(self) -> None:
        for component in _strongly_connected(self.nodes, self.outgoing):
            if not any(self.nodes[n].flow_node_type in _BRANCHING for n in component):
                first = next(n for n in self.graph.nodes if n.node_id in component)
                names = " → ".join(
                    self.nodes[n].name or n for n in (x.node_id for x in self.graph.nodes) if n in component
                )
                self.add(
                    first,
                    "",
                    f"cycle with no way out ({names}): each node starts the next forever; "
                    "add an If/else or a question classifier that leaves the cycle, or remove an edge",
                )

    def ancestors(self, node_id: str) -> set[str]:
        """Nodes that can run before ``node_id``: its upstream, and a loop child's parent's upstream."""
        cached = self._ancestors.get(node_id)
        if cached is not None:
            return cached
        seen: set[str] = set()
        stack = [node_id]
        while stack:
            current = stack.pop()
            node = self.nodes.get(current)
            parents = list(self.incoming.get(current, ()))
            if node is not None and node.parent_node_id:
                parents.append(node.parent_node_id)
            for parent in parents:
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        self._ancestors[node_id] = seen
        return seen

    # inputs --------------------------------------------------------------------------------------

    def _check_node(self, node: WorkflowNode) -> None:
        kind = node.flow_node_type
        if kind == FlowNodeType.ifElseNode:
            self._check_if_else(node)
        elif kind == FlowNodeType.userSelect:
            self._check_user_select(node)
        elif kind == FlowNodeType.formInput:
            value = _input_value(node, NodeInputKey.userInputForms)
            if not isinstance(value, list) or not value:
                self.add(node, NodeInputKey.userInputForms, "no form fields: add at least one field")
        elif kind == FlowNodeType.toolCall:
            tools = [
                e for e in self.graph.edges if e.source == node.node_id and e.target in self.tool_targets
            ]
            if not tools and not _input_value(node, "useAgentSandbox"):
                self.add(
                    node,
                    _SELECTED_TOOLS,
                    "no tools connected: the model answers without tools; connect one, or use AI chat",
                    "warning",
                )
        is_tool = node.node_id in self.tool_targets
        for item in node.inputs:
            self._check_input(node, item, is_tool)

    def _check_input(self, node: WorkflowNode, item: NodeInput, is_tool: bool) -> None:
        label = item.label or item.key
        render = _selected_render_type(item)
        value = item.value
        # a tool's inputs are the model's arguments or its configuration, which the tool-config status
        # (``toolConfigStatus``) reports; FastGPT exempts the ones with a ``toolDescription``
        if item.required and not is_tool and item.value_type and item.value_type not in _EXEMPT_VALUE_TYPES:
            if _is_empty(value):
                if item.key == "datasets" and node.flow_node_type == FlowNodeType.datasetSearchNode:
                    self.add(
                        node,
                        item.key,
                        "no knowledge base selected: the search finds nothing until you pick one",
                        "warning",
                    )
                else:
                    hint = "choose an upstream output" if render == "reference" else "fill it in"
                    self.add(node, item.key, f"{label} is required and not set: {hint}")
                return
            single = not item.value_type.startswith("array")
            # a literal is fine where the input also takes one (the console's editor switches to "type a
            # value" without FastGPT's ``selectedTypeIndex``)
            literal = isinstance(value, (str, int, float)) and any(
                t != "reference" for t in item.render_type_list
            )
            if render == "reference" and single and not is_reference(value) and not literal:
                self.add(node, item.key, f"{label} is required: choose an upstream output")
                return
        if render == "reference" and not _is_empty(value):
            references = [value] if is_reference(value) else value if isinstance(value, list) else []
            for reference in references:
                if is_reference(reference):
                    self._check_reference(node, item, str(reference[0]), str(reference[1]))
        if isinstance(value, str) and "{{$" in value:
            for match in _TEXT_REFERENCE.finditer(value):
                self._check_text_reference(node, item, match.group(1), match.group(2))
        if self.models is not None and _is_llm_input(item) and isinstance(value, str) and value:
            self._check_model(node, item, value)

    def _check_reference(self, node: WorkflowNode, item: NodeInput, ref_node: str, ref_output: str) -> None:
        label = item.label or item.key
        if ref_node == VARIABLE_NODE_ID:
            return
        source = self.nodes.get(ref_node)
        if source is None:
            self.add(node, item.key, f"{label} refers to node {ref_node}, which does not exist: choose again")
            return
        output = next((o for o in source.outputs if o.ref_id == ref_output), None)
        if output is None:
            self.add(
                node,
                item.key,
                f"{label} refers to output '{ref_output}' of '{source.name or ref_node}', "
                "which has no such output: choose again",
            )
            return
        if ref_node != node.node_id and ref_node not in self.ancestors(node.node_id):
            self.add(
                node,
                item.key,
                f"{label} reads '{source.name or ref_node}', which is not upstream of this node: "
                "it may not have run yet, and the value is then empty",
                "warning",
            )
        wanted, given = item.value_type or "any", output.value_type or "any"
        accepted = _ACCEPTS.get(wanted)
        if accepted is not None and given not in ("any", wanted) and given not in accepted:
            self.add(
                node,
                item.key,
                f"{label} expects {wanted} but '{source.name or ref_node}' gives {given}: "
                "the value is converted",
                "warning",
            )

    def _check_text_reference(self, node: WorkflowNode, item: NodeInput, ref_node: str, ref_key: str) -> None:
        if ref_node == VARIABLE_NODE_ID:
            return
        label = item.label or item.key
        source = self.nodes.get(ref_node)
        if source is None:
            self.add(
                node,
                item.key,
                f"{label} uses {{{{${ref_node}.{ref_key}$}}}}, but node {ref_node} does not exist: "
                "insert the variable again",
            )
            return
        if not any(o.ref_id == ref_key for o in source.outputs) and not any(
            i.key == ref_key for i in source.inputs
        ):
            self.add(
                node,
                item.key,
                f"{label} uses {{{{${ref_node}.{ref_key}$}}}}, but '{source.name or ref_node}' has no "
                f"output '{ref_key}': insert the variable again",
            )

    def _check_model(self, node: WorkflowNode, item: NodeInput, model_id: str) -> None:
        assert self.models is not None
        if model_id in self.models.chat_models:
            return
        default = self.models.default_chat_model
        if default:
            self.add(
                node,
                item.key,
                f"model '{model_id}' is not configured on this server: runs use the default chat model "
                f"'{default}'",
                "warning",
            )
        else:
            self.add(
                node,
                item.key,
                f"model '{model_id}' is not configured and this server has no chat model: runs fail "
                "until one is configured",
                "warning",
            )

    # node kinds ----------------------------------------------------------------------------------

    def _check_if_else(self, node: WorkflowNode) -> None:
        branches = _input_value(node, NodeInputKey.ifElseList)
        if not isinstance(branches, list):
            return
        for index, branch in enumerate(branches):
            conditions = branch.get("list") if isinstance(branch, dict) else None
            for position, condition in enumerate(conditions or []):
                if not isinstance(condition, dict):
                    continue
                name = "IF" if index == 0 else f"ELSE IF {index}"
                where = f"{name}, condition {position + 1}"
                if not condition.get("variable") or not condition.get("condition"):
                    self.add(node, NodeInputKey.ifElseList, f"{where}: choose a variable and a comparison")
                elif condition.get("value") is None and condition.get("condition") not in (
                    "isEmpty",
                    "isNotEmpty",
                ):
                    self.add(node, NodeInputKey.ifElseList, f"{where}: enter the value to compare with")
                elif is_reference(condition.get("variable")):
                    ref_node, _ = condition["variable"]
                    if ref_node != VARIABLE_NODE_ID and ref_node not in self.nodes:
                        self.add(
                            node,
                            NodeInputKey.ifElseList,
                            f"{where}: the variable's node {ref_node} does not exist: choose again",
                        )

    def _check_user_select(self, node: WorkflowNode) -> None:
        item = next((i for i in node.inputs if i.key == NodeInputKey.userSelectOptions), None)
        if item is None or _selected_render_type(item) == "reference":
            return
        options = item.value
        if not isinstance(options, list) or not options:
            self.add(node, item.key, "no options: add at least one option")
        elif any(not (isinstance(o, dict) and o.get("value")) for o in options):
            self.add(node, item.key, "an option has no text: fill it in or remove it")


def _input_value(node: WorkflowNode, key: str) -> Any:
    return next((i.value for i in node.inputs if i.key == key), None)


def _selected_render_type(item: NodeInput) -> str:
    types = item.render_type_list
    index = getattr(item, "selectedTypeIndex", None)
    position = index if isinstance(index, int) and 0 <= index < len(types) else 0
    return types[position] if types else ""


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (list, str)) and len(value) == 0)


def _is_llm_input(item: NodeInput) -> bool:
    types = item.render_type_list
    return bool(set(types) & _LLM_RENDER_TYPES) or (item.key == "model" and types[:1] != ["reference"])


def _strongly_connected(nodes: dict[str, WorkflowNode], outgoing: dict[str, list[str]]) -> list[set[str]]:
    """Components of the edge graph that hold a cycle (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            current, position = work.pop()
            if position == 0:
                index[current] = low[current] = counter
                counter += 1
                stack.append(current)
                on_stack.add(current)
            targets = [t for t in outgoing.get(current, ()) if t in nodes]
            if position < len(targets):
                work.append((current, position + 1))
                target = targets[position]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[current] = min(low[current], index[target])
                continue
            for target in targets:
                if target in on_stack:
                    low[current] = min(low[current], low[target])
            if low[current] == index[current]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == current:
                        break
                if len(component) > 1 or current in outgoing.get(current, ()):
                    found.append(component)
    return found
