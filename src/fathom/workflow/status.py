"""The run / skip / wait decision (FastGPT ``WorkflowQueue.buildNodeEdgeGroupsMap`` and
``getNodeRunStatus``, current version).

The incoming control edges of each node are split into *groups* once per graph:

- one depth-first walk over the whole graph (from the nodes without incoming edges, then any node
  not yet seen) labels each edge; an edge that closes a cycle on the walk's current path is a
  *back* edge;
- strongly connected components tell whether a node sits on a loop;
- a node on no loop gets one group of all its forward edges; a node on a loop gets its forward edges
  grouped by *branch* (the handle of the first branch node — if/else, classify question, user
  select — met walking upstream, or "common" when there is none);
- back edges are always grouped by branch, after the forward groups.

A node runs when some group has an active edge and no waiting one; it is skipped when every edge of
every group is skipped; otherwise it waits. A node without incoming edges runs (an entry node).
The previous rule (edges split into "common" and "recursive" by walking upstream to a start node)
let a loop-back edge that can also be traced to the start block its node; see
``tests/fastgpt_conformance/test_check_node_run_status.py``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Literal

from fathom.workflow.constants import FlowNodeType
from fathom.workflow.runtime import RuntimeEdge, RuntimeNode, is_control_edge

RunStatus = Literal["run", "skip", "wait"]
EdgeGroups = tuple[tuple[int, ...], ...]

BRANCH_NODE_TYPES = frozenset(
    {FlowNodeType.ifElseNode, FlowNodeType.classifyQuestion, FlowNodeType.userSelect}
)
_NO_BRANCH = "common"


class EdgeClassifier:
    """Groups the incoming control edges of each node (edge indices into the run's edge list)."""

    def __init__(self, node_types: Mapping[str, str], edges: Sequence[RuntimeEdge]) -> None:
        self._types = node_types
        self._incoming: dict[str, list[int]] = {}
        self._outgoing: dict[str, list[int]] = {}
        for index, edge in enumerate(edges):
            if not is_control_edge(edge) or edge.source not in node_types or edge.target not in node_types:
                continue
            self._incoming.setdefault(edge.target, []).append(index)
            self._outgoing.setdefault(edge.source, []).append(index)
        self._edges = [(edge.source, edge.source_handle, edge.target) for edge in edges]
        self._back = self._back_edges()
        self._on_loop = self._nodes_on_loops()
        self._branch_cache: dict[tuple[str, str], str] = {}
        self._cache: dict[str, EdgeGroups] = {}

    @classmethod
    def of_nodes(cls, nodes: Mapping[str, RuntimeNode], edges: Sequence[RuntimeEdge]) -> EdgeClassifier:
        """The classifier of a run's runtime nodes (their types, by id) and edges."""
        return cls({node_id: node.flow_node_type for node_id, node in nodes.items()}, edges)

    def incoming(self, node_id: str) -> list[int]:
        """Indices of the control edges into a node."""
        return self._incoming.get(node_id, [])

    def outgoing(self, node_id: str) -> list[int]:
        """Indices of the control edges out of a node."""
        return self._outgoing.get(node_id, [])

    def classify(self, node_id: str) -> EdgeGroups:
        """The node's edge groups: forward groups first, then the back-edge groups."""
        cached = self._cache.get(node_id)
        if cached is not None:
            return cached
        forward = [i for i in self.incoming(node_id) if i not in self._back]
        back = [i for i in self.incoming(node_id) if i in self._back]
        groups: list[tuple[int, ...]] = []
        if forward:
            groups += self._by_branch(forward) if node_id in self._on_loop else [tuple(forward)]
        if back:
            groups += self._by_branch(back)
        result = tuple(groups)
        self._cache[node_id] = result
        return result

    def _by_branch(self, indices: list[int]) -> list[tuple[int, ...]]:
        grouped: dict[str, list[int]] = {}
        for index in indices:
            source, handle, _ = self._edges[index]
            grouped.setdefault(self._branch_handle(source, handle), []).append(index)
        return [tuple(group) for group in grouped.values()]

    def _branch_handle(self, source: str, handle: str) -> str:
        """The handle of the first branch node met walking upstream (breadth first) from an edge.

        From a node that is not a branch node the answer does not depend on the edge's own handle, and
        along a chain of such nodes with one incoming edge each it is the answer of the node upstream,
        so chains are followed without a walk per node (a long loop costs O(n), not O(n²))."""
        if self._is_branch(source):
            return self._walk_upstream(source, handle)
        path: list[str] = []
        on_path: set[str] = set()
        node = source
        found: str | None = None
        while found is None:
            cached = self._branch_cache.get((node, ""))
            if cached is not None:
                found = cached
                break
            incoming = self.incoming(node)
            if len(incoming) != 1:
                found = self._walk_upstream(node, "")
                break
            path.append(node)
            on_path.add(node)
            upstream, upstream_handle, _ = self._edges[incoming[0]]
            if self._is_branch(upstream):
                found = upstream_handle or self._walk_upstream(upstream, "")
            elif upstream in on_path:  # a loop of plain nodes: no branch upstream
                found = _NO_BRANCH
            else:
                node = upstream
        for member in path:
            self._branch_cache[(member, "")] = found
        return found

    def _walk_upstream(self, source: str, handle: str) -> str:
        """FastGPT's ``findBranchHandle`` breadth-first walk, from an edge leaving ``source``."""
        key = (source, handle)
        cached = self._branch_cache.get(key)
        if cached is not None:
            return cached
        found = _NO_BRANCH
        visited: set[str] = set()
        queue: deque[tuple[str, str]] = deque([key])
        while queue:
            node, current = queue.popleft()
            if node in visited:
                continue
            visited.add(node)
            if self._types.get(node) in BRANCH_NODE_TYPES and current:
                found = current
                break
            for index in self.incoming(node):
                upstream, upstream_handle, _ = self._edges[index]
                queue.append((upstream, upstream_handle if self._is_branch(upstream) else current))
        self._branch_cache[key] = found
        return found

    def _is_branch(self, node_id: str) -> bool:
        return self._types.get(node_id) in BRANCH_NODE_TYPES

    def _back_edges(self) -> set[int]:
        """Edges that close a cycle on one depth-first walk: from the nodes without incoming edges
        (in node order), then from every node not reached yet; out-edges in edge order."""
        visited: set[str] = set()
        on_path: set[str] = set()
        back: set[int] = set()
        roots = [node for node in self._types if not self.incoming(node)]
        for root in roots + list(self._types):
            if root in visited:
                continue
            visited.add(root)
            on_path.add(root)
            work: list[tuple[str, int]] = [(root, 0)]
            while work:
                node, position = work[-1]
                out = self.outgoing(node)
                if position == len(out):
                    work.pop()
                    on_path.discard(node)
                    continue
                work[-1] = (node, position + 1)
                target = self._edges[out[position]][2]
                if target not in visited:
                    visited.add(target)
                    on_path.add(target)
                    work.append((target, 0))
                elif target in on_path:
                    back.add(out[position])
        return back

    def _nodes_on_loops(self) -> set[str]:
        """Nodes in a strongly connected component of more than one node (iterative Tarjan)."""
        index_of: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        looped: set[str] = set()
        counter = 0
        for root in self._types:
            if root in index_of:
                continue
            work: list[tuple[str, int]] = [(root, 0)]
            while work:
                node, position = work.pop()
                if position == 0:
                    index_of[node] = low[node] = counter
                    counter += 1
                    stack.append(node)
                    on_stack.add(node)
                out = self.outgoing(node)
                if position < len(out):
                    work.append((node, position + 1))
                    child = self._edges[out[position]][2]
                    if child not in index_of:
                        work.append((child, 0))
                    elif child in on_stack:
                        low[node] = min(low[node], index_of[child])
                    continue
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index_of[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        looped.update(members)
        return looped


def decide_run_status(groups: EdgeGroups, edges: Sequence[RuntimeEdge]) -> RunStatus:
    """Apply the rule to the current edge statuses."""
    if not groups:
        return "run"
    statuses = [[edges[i].status for i in group] for group in groups]
    if any("active" in group and "waiting" not in group for group in statuses):
        return "run"
    if all(status == "skipped" for group in statuses for status in group):
        return "skip"
    return "wait"
