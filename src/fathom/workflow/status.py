"""The run / skip / wait decision (FastGPT ``checkNodeRunStatus``, newest version).

Incoming edges of a node are *common* when an upstream walk reaches a start-type node, or
*recursive* when it comes back to the node itself (grouped by the edge where the cycle closes).
The classification depends only on the topology, so it is computed once per node and cached;
edges whose source is outside the node's strongly connected component are classified by plain
reachability from the start nodes, so long chains cost O(1) per node instead of a walk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from fathom.workflow.constants import START_NODE_TYPES
from fathom.workflow.runtime import RuntimeEdge, is_control_edge

RunStatus = Literal["run", "skip", "wait"]
Classification = tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]


class EdgeClassifier:
    """Classifies the incoming control edges of each node as common or recursive (by group)."""

    def __init__(self, node_types: Mapping[str, str], edges: Sequence[RuntimeEdge]) -> None:
        self._types = node_types
        self._incoming: dict[str, list[int]] = {}
        self._outgoing: dict[str, list[int]] = {}
        for index, edge in enumerate(edges):
            if not is_control_edge(edge) or edge.source not in node_types or edge.target not in node_types:
                continue
            self._incoming.setdefault(edge.target, []).append(index)
            self._outgoing.setdefault(edge.source, []).append(index)
        self._edges = [(edge.source, edge.target) for edge in edges]
        self._cache: dict[str, Classification] = {}
        self._component = self._components()
        self._from_start = self._reachable_from_start()

    def incoming(self, node_id: str) -> list[int]:
        """Indices of the control edges into a node."""
        return self._incoming.get(node_id, [])

    def outgoing(self, node_id: str) -> list[int]:
        """Indices of the control edges out of a node."""
        return self._outgoing.get(node_id, [])

    def classify(self, node_id: str) -> Classification:
        """``(common edge indices, recursive groups of edge indices)`` for a node."""
        cached = self._cache.get(node_id)
        if cached is not None:
            return cached
        common: list[int] = []
        groups: dict[str, list[int]] = {}
        component = self._component.get(node_id)
        for index in self.incoming(node_id):
            source = self._edges[index][0]
            if source != node_id and self._component.get(source) != component:
                if source in self._from_start:
                    common.append(index)
                continue
            is_common, group_keys = self._walk(index, node_id)
            if is_common:
                common.append(index)
            for key in group_keys:
                groups.setdefault(key, []).append(index)
        result: Classification = (tuple(common), tuple(tuple(group) for group in groups.values()))
        self._cache[node_id] = result
        return result

    def _walk(self, first: int, target: str) -> tuple[bool, list[str]]:
        is_common = False
        group_keys: list[str] = []
        visited = {target}
        stack = [first]
        while stack:
            index = stack.pop()
            source, edge_target = self._edges[index]
            if self._types.get(source) in START_NODE_TYPES:
                is_common = True
                continue
            if source == target:
                if edge_target not in group_keys:
                    group_keys.append(edge_target)
                continue
            if source in visited:
                continue
            visited.add(source)
            stack.extend(self.incoming(source))
        return is_common, group_keys

    def _reachable_from_start(self) -> set[str]:
        seen = {node for node, kind in self._types.items() if kind in START_NODE_TYPES}
        stack = list(seen)
        while stack:
            node = stack.pop()
            for index in self.outgoing(node):
                target = self._edges[index][1]
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return seen

    def _components(self) -> dict[str, int]:
        """Strongly connected components (iterative Tarjan) over control edges."""
        index_of: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        component: dict[str, int] = {}
        counter = 0
        labels = 0
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
                    child = self._edges[out[position]][1]
                    if child not in index_of:
                        work.append((child, 0))
                    elif child in on_stack:
                        low[node] = min(low[node], index_of[child])
                    continue
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index_of[node]:
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component[member] = labels
                        if member == node:
                            break
                    labels += 1
        return component


def decide_run_status(classification: Classification, edges: Sequence[RuntimeEdge]) -> RunStatus:
    """Apply the rule to the current edge statuses."""
    common, groups = classification
    if not common and not groups:
        return "run"
    common_status = [edges[i].status for i in common]
    if "active" in common_status and "waiting" not in common_status:
        return "run"
    group_status = [[edges[i].status for i in group] for group in groups]
    for statuses in group_status:
        if "active" in statuses and "waiting" not in statuses:
            return "run"
    if common_status and all(status == "skipped" for status in common_status):
        return "skip"
    if any(all(status == "skipped" for status in statuses) for statuses in group_status):
        return "skip"
    return "wait"
