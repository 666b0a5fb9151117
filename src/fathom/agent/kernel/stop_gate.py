"""The stop gate (spec §3.8): before the model may finish, an unresolved plan sends it back to work.

Provider-neutral: every provider calls :func:`stop_gate_rejects` when the model answers without tools.

Opt-in through ``AgentLoopRuntime.stop_gate``. Resolved statuses are ``done``, ``skipped`` and
``blocked``. A rejection appends a hidden user message ``<stop_gate_feedback> You cannot finish yet. …``
and emits ``stop_gate``; ``max_rejections`` caps how often one run rejects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fathom.agent.events import StopGateEvent
from fathom.agent.kernel.state import RunState
from fathom.agent.types import StopGateConfig

RESOLVED_STATUSES = ("done", "skipped", "blocked")
FEEDBACK_START = "<stop_gate_feedback>"
FEEDBACK_END = "</stop_gate_feedback>"

__all__ = [
    "FEEDBACK_END",
    "FEEDBACK_START",
    "RESOLVED_STATUSES",
    "StopGateConfig",
    "stop_gate_rejects",
]


def _steps(plan: dict[str, Any]) -> str:
    return "\n".join(
        f"- {s['id']}: {s['name']} ({s.get('status', 'pending')})" for s in plan.get("steps", [])
    )


def _stop_gate_feedback(
    plan: dict[str, Any] | None, *, require_plan: bool, tools_since_plan_update: bool
) -> str | None:
    """The feedback that rejects finishing, or None when the model may finish."""
    if not plan or not plan.get("steps"):
        if not require_plan:
            return None
        body = "The user asked for a plan: call set_plan with the steps first, then work through them."
        return f"{FEEDBACK_START} You cannot finish yet. {body}{FEEDBACK_END}"
    unresolved = [s for s in plan["steps"] if s.get("status") not in RESOLVED_STATUSES]
    if unresolved:
        reason = "The active plan still has unresolved steps:"
    elif tools_since_plan_update:
        reason = "You used tools after the last plan update, so the plan may not reflect your progress:"
    else:
        return None
    return (
        f"{FEEDBACK_START} You cannot finish yet. {reason}\n{_steps(plan)}\n"
        "Finish the remaining work, then call update_plan to mark each step done, skipped or blocked "
        f"before you answer.{FEEDBACK_END}"
    )


async def stop_gate_rejects(state: RunState, append: Callable[[dict[str, Any]], None]) -> bool:
    """The gate after a model answer with no tool calls: True when it rejected finishing (the hidden
    feedback message went to ``append``, ``stop_gate`` was emitted) and the model must go on. Never
    rejects when the gate is off, its rejections are spent, or the run made its last allowed request."""
    config = state.runtime.stop_gate
    if config is None or state.stop_gate_rejections >= config.max_rejections:
        return False
    if state.request_index >= max(1, state.runtime.max_run_agent_times):
        return False
    feedback = _stop_gate_feedback(
        state.active_plan,
        require_plan=config.require_plan,
        tools_since_plan_update=state.tools_since_plan_update,
    )
    if feedback is None:
        return False
    state.stop_gate_rejections += 1
    append({"role": "user", "content": feedback, "hideInUI": True, "stopGate": True})
    await state.emit(StopGateEvent(feedback, state.stop_gate_rejections))
    return True
