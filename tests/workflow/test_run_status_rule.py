"""The run / skip / wait rule (spec §4.2, current FastGPT): edge groups by branch and loop.

FastGPT's own cases are in ``tests/fastgpt_conformance/test_fastgpt_check_node_run_status.py``."""

from __future__ import annotations

import random

import pytest

from fathom.workflow import EdgeClassifier, RuntimeEdge, decide_run_status


def check_node_run_status(node_id: str, node_types: dict[str, str], edges: list[RuntimeEdge]) -> str:
    """The engine's run/skip/wait decision for one node (it caches the classifier per run)."""
    return decide_run_status(EdgeClassifier(node_types, edges).classify(node_id), edges)


def edges_of(*specs: tuple[str, str, str]) -> list[RuntimeEdge]:
    return [RuntimeEdge(s, f"{s}-source-right", t, f"{t}-target-left", status) for s, t, status in specs]


TYPES = {"S": "workflowStart", "A": "answerNode", "B": "answerNode", "C": "answerNode", "D": "answerNode"}


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        # §4.2.6: A→B active, C→B waiting ⇒ wait
        ((("S", "A", "active"), ("S", "C", "active"), ("A", "B", "active"), ("C", "B", "waiting")), "wait"),
        # both active ⇒ run
        ((("S", "A", "active"), ("S", "C", "active"), ("A", "B", "active"), ("C", "B", "active")), "run"),
        # A→B skipped, C→B active ⇒ run
        ((("S", "A", "active"), ("S", "C", "active"), ("A", "B", "skipped"), ("C", "B", "active")), "run"),
        # all incoming skipped ⇒ skip
        ((("S", "A", "active"), ("S", "C", "active"), ("A", "B", "skipped"), ("C", "B", "skipped")), "skip"),
        # no incoming edges ⇒ run (entry)
        ((("S", "A", "active"),), "run"),
    ],
    ids=["one-waiting", "all-active", "skipped-and-active", "all-skipped", "entry"],
)
def test_spec_vectors(edges: tuple[tuple[str, str, str], ...], expected: str) -> None:
    node = "B" if any(t == "B" for _, t, _ in edges) else "S"
    assert check_node_run_status(node, TYPES, edges_of(*edges)) == expected


def loop_edges(common: str, back: str) -> list[RuntimeEdge]:
    # S → B → C → D → B (back edge D→B closes a cycle through B)
    return edges_of(("S", "B", common), ("B", "C", "waiting"), ("C", "D", "waiting"), ("D", "B", back))


def test_forward_edge_and_back_edge_form_two_groups() -> None:
    classifier = EdgeClassifier(TYPES, loop_edges("waiting", "waiting"))
    assert classifier.classify("B") == ((0,), (3,))


@pytest.mark.parametrize(
    ("common", "back", "expected"),
    [
        ("active", "waiting", "run"),  # first pass: common group ready, loop group still waiting
        ("waiting", "active", "run"),  # loop fires again through the recursive group
        ("skipped", "active", "run"),  # spec: loop group active while the forward edge is skipped
        # current FastGPT skips only when every group is all skipped (the older rule skipped when any
        # recursive group was: a node whose loop exited while its forward edge still waited)
        ("waiting", "skipped", "wait"),
        ("skipped", "skipped", "skip"),
        ("waiting", "waiting", "wait"),
    ],
)
def test_loop_back_edge_groups(common: str, back: str, expected: str) -> None:
    assert check_node_run_status("B", TYPES, loop_edges(common, back)) == expected


def test_self_loop_edge_is_its_own_group() -> None:
    edges = edges_of(("S", "A", "waiting"), ("A", "A", "active"))
    classifier = EdgeClassifier(TYPES, edges)
    assert classifier.classify("A") == ((0,), (1,))
    assert check_node_run_status("A", TYPES, edges) == "run"


def test_selected_tools_edges_are_not_control_flow() -> None:
    edges = [
        RuntimeEdge("S", "S-source-right", "A", "A-target-left", "active"),
        RuntimeEdge("A", "selectedTools", "B", "selectedTools", "waiting"),
    ]
    assert EdgeClassifier(TYPES, edges).classify("B") == ()


def test_edge_from_a_node_no_start_reaches_counts_like_any_forward_edge() -> None:
    # D → B where D has no path from a start node. The older rule (walk upstream to a start node)
    # ignored this edge; current FastGPT groups it with B's other forward edges, so B waits for D
    # (its safe.test.ts DA-2.3 asserts exactly this with an unconnected X → A).
    edges = edges_of(("S", "B", "active"), ("D", "B", "waiting"))
    assert EdgeClassifier(TYPES, edges).classify("B") == ((0, 1),)
    assert check_node_run_status("B", TYPES, edges) == "wait"


def test_long_chain_and_long_loop_classify_without_recursion() -> None:
    types = {"S": "workflowStart", **{f"n{i}": "answerNode" for i in range(3000)}}
    specs = [("S", "n0", "waiting")] + [(f"n{i}", f"n{i + 1}", "waiting") for i in range(2999)]
    classifier = EdgeClassifier(types, edges_of(*specs))
    assert classifier.classify("n2999") == ((2999,),)
    looped = EdgeClassifier(types, edges_of(*specs, ("n2999", "n0", "waiting")))
    assert looped.classify("n0") == ((0,), (3000,))


def reference_branch_handle(types: dict[str, str], edges: list[RuntimeEdge], source: str, handle: str) -> str:
    """FastGPT's ``findBranchHandle`` as written: breadth first upstream from an edge."""
    branch = {"ifElseNode", "classifyQuestion", "userSelect"}
    incoming: dict[str, list[RuntimeEdge]] = {}
    for edge in edges:
        incoming.setdefault(edge.target, []).append(edge)
    visited: set[str] = set()
    queue = [(source, handle)]
    while queue:
        node, current = queue.pop(0)
        if node in visited:
            continue
        visited.add(node)
        if types.get(node) in branch and current:
            return current
        for edge in incoming.get(node, []):
            queue.append((edge.source, edge.source_handle if types.get(edge.source) in branch else current))
    return "common"


def test_grouping_by_branch_matches_fastgpts_walk_on_random_graphs() -> None:
    # The classifier follows chains of plain nodes instead of walking from every edge; on random graphs
    # with loops and branch nodes every edge gets the branch FastGPT's breadth-first walk gives it.
    rng = random.Random(35)
    kinds = ["answerNode", "answerNode", "chatNode", "ifElseNode", "userSelect"]
    for _ in range(200):
        size = rng.randint(2, 9)
        types = {"S": "workflowStart", **{f"n{i}": rng.choice(kinds) for i in range(size)}}
        names = list(types)
        specs = [("S", "n0")] + [
            (rng.choice(names), rng.choice(names[1:])) for _ in range(rng.randint(1, 14))
        ]
        edges = [
            RuntimeEdge(s, f"{s}-source-{rng.choice(['right', 'IF', 'ELSE', 'a'])}", t, f"{t}-target-left")
            for s, t in specs
        ]
        classifier = EdgeClassifier(types, edges)
        for edge in edges:
            expected = reference_branch_handle(types, edges, edge.source, edge.source_handle)
            assert classifier._branch_handle(edge.source, edge.source_handle) == expected
