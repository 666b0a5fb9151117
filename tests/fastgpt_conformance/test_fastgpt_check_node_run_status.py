"""FastGPT's run/skip/wait cases (``checkNodeRunStatus/{base,safe,toolcall}.test.ts``) against
Fathom's ``EdgeClassifier`` + ``decide_run_status``; the cases are data in ``run_status_cases.py``."""

from __future__ import annotations

import pytest
from run_status_cases import SCENARIOS, Scenario, Step

from fathom.workflow import EdgeClassifier, RuntimeEdge, decide_run_status

STATUS = {"a": "active", "w": "waiting", "s": "skipped"}


def build(scenario: Scenario) -> tuple[dict[str, str], list[RuntimeEdge], dict[str, int]]:
    types = {}
    for spec in scenario.nodes:
        node_id, _, kind = spec.partition(":")
        types[node_id] = kind or "chatNode"
    edges, position = [], {}
    for spec in scenario.edges:
        pair, _, handle = spec.partition("@")
        source, target = pair.split(">")
        position[pair] = len(edges)
        edges.append(RuntimeEdge(source, handle or f"{source}-source-right", target, f"{target}-target-left"))
    return types, edges, position


def case_id(scenario: Scenario, step: Step) -> str:
    return f"{scenario.file.rsplit('/', 1)[-1]}::{step.test}"


STEP_CASES = [
    pytest.param(scenario, index, id=case_id(scenario, step))
    for scenario in SCENARIOS
    for index, step in enumerate(scenario.steps)
]


@pytest.mark.parametrize(("scenario", "upto"), STEP_CASES)
def test_run_status_matches_fastgpt(scenario: Scenario, upto: int) -> None:
    types, edges, position = build(scenario)
    classifier = EdgeClassifier(types, edges)
    for step in scenario.steps[: upto + 1]:  # statuses carry over between FastGPT's steps
        for edge, status in step.set.items():
            edges[position[edge]].status = STATUS[status]
    step = scenario.steps[upto]
    found = {node: decide_run_status(classifier.classify(node), edges) for node in step.expect}
    assert found == step.expect


GROUP_CASES = [
    pytest.param(scenario, check, id=f"{scenario.file.rsplit('/', 1)[-1]}::{check[0]}")
    for scenario in SCENARIOS
    for check in scenario.group_counts
]


@pytest.mark.parametrize(("scenario", "check"), GROUP_CASES)
def test_edge_groups_match_fastgpt(
    scenario: Scenario, check: tuple[str, str, int, tuple[int, ...] | None]
) -> None:
    _, node, count, sizes = check
    types, edges, _ = build(scenario)
    groups = EdgeClassifier(types, edges).classify(node)
    assert len(groups) == count
    if sizes is not None:
        assert tuple(len(group) for group in groups) == sizes


def test_every_scenario_names_its_fastgpt_source() -> None:
    for scenario in SCENARIOS:
        assert scenario.file.endswith(".test.ts") and len(scenario.commit) == 40
        assert scenario.steps or scenario.group_counts
