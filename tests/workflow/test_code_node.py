"""The code node through the real sandbox runner (Python and JavaScript when available)."""

from __future__ import annotations

from typing import Any

import pytest
from wf_builders import answer, edge, node_input, output, start, workflow

from fathom.sandbox import SandboxLimits, SandboxRunner
from fathom.workflow import WorkflowServices, run_workflow

PY = "def main(variables):\n    return {'double': variables['n'] * 2, 'greet': 'hi ' + variables['who']}\n"
JS = "function main({n, who}) { return {double: n * 2, greet: 'hi ' + who}; }"


def code_node(code: str, code_type: str, catch: bool = False) -> dict[str, Any]:
    return {
        "nodeId": "code",
        "name": "code",
        "flowNodeType": "code",
        "catchError": catch,
        "inputs": [
            node_input("system_addInputParam", {}, "dynamic", render="addInputParam"),
            node_input("codeType", code_type),
            node_input("code", code),
            node_input("n", 21, "number", canEdit=True),
            node_input("who", ["start", "userChatInput"], "string", canEdit=True),
        ],
        "outputs": [output("system_rawResponse", "object"), output("double", "number"), output("greet")],
    }


@pytest.fixture(scope="module")
def sandbox() -> SandboxRunner:
    runner = SandboxRunner(SandboxLimits(wall_seconds=20), allow_insecure=True)
    return runner


@pytest.mark.parametrize(("code", "code_type"), [(PY, "py"), (JS, "js")], ids=["python", "javascript"])
async def test_code_outputs_become_node_outputs(sandbox: SandboxRunner, code: str, code_type: str) -> None:
    if code_type == "js" and not sandbox.isolation.node:
        pytest.skip("node is not installed on this machine")
    graph = workflow(
        [start(), code_node(code, code_type), answer("a", "{{$code.greet$}} {{$code.double$}}")],
        [edge("start", "code"), edge("code", "a")],
    )
    result = await run_workflow(graph, query="Ann", services=WorkflowServices(sandbox=sandbox))
    assert result.node_outputs["code"]["double"] == 42
    assert result.answer_text == "\nhi Ann 42"


async def test_failing_code_routes_to_the_error_branch(sandbox: SandboxRunner) -> None:
    broken = "def main(variables):\n    raise ValueError('nope')\n"
    graph = workflow(
        [
            start(),
            code_node(broken, "py", catch=True),
            answer("ok", "ok"),
            answer("bad", "{{$code.system_error_text$}}"),
        ],
        [edge("start", "code"), edge("code", "ok"), edge("code", "bad", kind="source_catch")],
    )
    graph["nodes"][1]["outputs"].append(output("system_error_text"))
    result = await run_workflow(graph, query="x", services=WorkflowServices(sandbox=sandbox))
    assert result.skipped_node_ids == ["ok"]
    assert "nope" in result.answer_text


async def test_unresolved_reference_reaches_the_script_as_absent(sandbox: SandboxRunner) -> None:
    """FastGPT passes an unresolved reference as ``undefined``: the script's own default applies."""
    if not sandbox.isolation.node:
        pytest.skip("node is not installed on this machine")
    node = code_node(
        "function main({n, who = 'nobody'}) { return {greet: 'hi ' + who, has: 'who' in arguments[0]}; }",
        "js",
    )
    node["inputs"][-1]["value"] = ["start", "neverSet"]  # the start node has no such output
    graph = workflow(
        [start(), node, answer("a", "{{$code.greet$}}")], [edge("start", "code"), edge("code", "a")]
    )
    result = await run_workflow(graph, query="Ann", services=WorkflowServices(sandbox=sandbox))
    assert result.answer_text == "\nhi nobody"
    assert result.node_outputs["code"]["system_rawResponse"]["has"] is False
