"""Table-driven workflow scenarios over FastGPT-format JSON fixtures (``fixtures/*.json``): each
step runs (or resumes) the workflow and checks answer, node order, skips, interactive record,
variables, outputs and flags."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from wf_http_server import loopback_server

from fathom.workflow import (
    InteractiveEvent,
    WorkflowEvent,
    WorkflowServices,
    load_workflow,
    resume_workflow,
    run_workflow,
)

FIXTURE_DIR = Path(__file__).parent / "fixtures"
FIXTURES = sorted(FIXTURE_DIR.glob("*.json"))
SPECS = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in FIXTURES}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with loopback_server() as url:
        yield url


def _check(result: Any, events: list[WorkflowEvent], expect: dict[str, Any]) -> None:
    if "answer" in expect:
        assert result.answer_text == expect["answer"]
    if "run" in expect:
        assert result.run_node_ids == expect["run"]
    if "run_count" in expect:
        assert len(result.run_node_ids) == expect["run_count"]
    if "skipped" in expect:
        assert result.skipped_node_ids == expect["skipped"]
    if "variables" in expect:
        for key, value in expect["variables"].items():
            assert result.new_variables[key] == value
    if "outputs" in expect:
        for node_id, values in expect["outputs"].items():
            for key, value in values.items():
                assert result.node_outputs[node_id][key] == value
    if "error" in expect:
        assert result.error == expect["error"]
    assert result.budget_exhausted is expect.get("budget_exhausted", False)
    interactive = expect.get("interactive")
    if interactive is None:
        assert result.interactive is None
        assert not any(isinstance(e, InteractiveEvent) for e in events)
        return
    record = result.interactive
    assert record is not None
    for key, value in interactive.items():
        assert record[key] == value
    sent = [e for e in events if isinstance(e, InteractiveEvent)]
    assert len(sent) == 1 and sent[0].interactive == record
    assert result.assistant_responses[-1] == {"type": "interactive", "interactive": record}
    json.dumps(record)  # serialisable as is
    for pair in expect.get("memory_active", []):
        source, target = pair.split("->")
        edges = record["memoryEdges"]
        states = {e["status"] for e in edges if e["source"] == source and e["target"] == target}
        assert states == {"active"}


@pytest.mark.parametrize("name", sorted(SPECS))
async def test_fixture(name: str, base_url: str) -> None:
    spec = SPECS[name]
    graph = load_workflow(spec["workflow"])
    assert graph.to_dict() == spec["workflow"]
    async with httpx.AsyncClient() as client:
        services = WorkflowServices(http_client=client)
        previous: Any = None
        for step in spec["steps"]:
            events: list[WorkflowEvent] = []
            options: dict[str, Any] = {
                "services": services,
                "emit": events.append,
                "variables": {"base": base_url, **step.get("variables", {})},
            }
            if "resume" in step:
                assert previous is not None and previous.interactive is not None
                result = await resume_workflow(graph, previous.interactive, step["resume"], **options)
            else:
                result = await run_workflow(graph, query=step["query"], **options)
            _check(result, events, step["expect"])
            previous = result


def test_every_fixture_is_listed() -> None:
    assert len(FIXTURES) >= 10
