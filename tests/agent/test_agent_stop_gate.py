"""The stop gate (spec §3.8); the loop tests run against every registered provider."""

from __future__ import annotations

import importlib.util

import pytest
from agent_helpers import Recorder, all_providers, make_runtime

from fathom.agent import AgentLoopInput, StopGateConfig, SystemToolsConfig, run_agent_loop
from fathom.agent.kernel.stop_gate import _stop_gate_feedback
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn

PLAN = {
    "name": "P",
    "steps": [
        {"id": "step_1", "name": "A", "status": "done"},
        {"id": "step_2", "name": "B", "status": "pending"},
    ],
}


@pytest.fixture(params=all_providers())
def provider(request: pytest.FixtureRequest) -> str:
    name = str(request.param)
    if name == "pydanticAI" and importlib.util.find_spec("pydantic_ai") is None:
        pytest.skip("pydanticAI provider: pydantic-ai-slim not installed")
    return name


@pytest.mark.parametrize("status", ["done", "skipped", "blocked"])
def test_resolved_plans_may_finish(status: str) -> None:
    plan = {"steps": [{"id": "s", "name": "n", "status": status}]}
    assert _stop_gate_feedback(plan, require_plan=False, tools_since_plan_update=False) is None


def test_unresolved_steps_are_listed() -> None:
    text = _stop_gate_feedback(PLAN, require_plan=False, tools_since_plan_update=False)
    assert text is not None and text.startswith("<stop_gate_feedback> You cannot finish yet.")
    assert "- step_1: A (done)\n- step_2: B (pending)" in text and "update_plan" in text
    assert text.endswith("</stop_gate_feedback>")


def test_no_plan_is_allowed_unless_the_user_required_one() -> None:
    assert _stop_gate_feedback(None, require_plan=False, tools_since_plan_update=True) is None
    required = _stop_gate_feedback(None, require_plan=True, tools_since_plan_update=False)
    assert required is not None and "set_plan" in required


def test_tools_used_after_the_last_plan_update_reject() -> None:
    done = {"steps": [{"id": "s", "name": "n", "status": "done"}]}
    assert _stop_gate_feedback(done, require_plan=False, tools_since_plan_update=True) is not None


async def test_loop_sends_the_model_back_until_the_plan_is_resolved(
    provider: str, server: ScriptedOpenAIServer, recorder: Recorder
) -> None:
    server.set_script(
        [
            text_turn("finished?"),
            tool_call_turn([("update_plan", {"updates": [{"id": "step_2", "status": "done"}]})]),
            text_turn("finished."),
        ]
    )
    runtime = make_runtime(
        server, recorder, system_tools=SystemToolsConfig(plan=True), stop_gate=StopGateConfig()
    )
    result = await run_agent_loop(
        provider, AgentLoopInput(messages=[{"role": "user", "content": "go"}], active_plan=PLAN), runtime
    )
    assert result.status == "done" and result.answer_text == "finished."
    gate = recorder.of("stop_gate")
    assert len(gate) == 1 and gate[0].rejections == 1
    sent = server.chat_requests[1]["messages"][-1]
    assert sent["role"] == "user" and sent["content"] == gate[0].feedback  # hideInUI is not sent
    hidden = [m for m in result.complete_messages if m.get("stopGate")]
    assert len(hidden) == 1 and hidden[0]["hideInUI"] is True


async def test_rejections_are_capped(provider: str, server: ScriptedOpenAIServer, recorder: Recorder) -> None:
    server.set_script([text_turn("one"), text_turn("two")])
    runtime = make_runtime(
        server,
        recorder,
        system_tools=SystemToolsConfig(plan=True),
        stop_gate=StopGateConfig(max_rejections=1),
    )
    result = await run_agent_loop(
        provider, AgentLoopInput(messages=[{"role": "user", "content": "go"}], active_plan=PLAN), runtime
    )
    assert result.status == "done" and result.answer_text == "two"
    assert len(recorder.of("stop_gate")) == 1 and len(server.chat_requests) == 2
