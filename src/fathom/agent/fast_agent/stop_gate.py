"""The stop gate (spec §3.8): before the model may finish, an unresolved plan sends it back to work.

Opt-in through ``AgentLoopRuntime.stop_gate``. Resolved statuses are ``done``, ``skipped`` and
``blocked``. A rejection appends a hidden user message ``<stop_gate_feedback> You cannot finish yet. …``
and emits ``stop_gate``; ``max_rejections`` caps how often one run rejects.
"""

from __future__ import annotations

from typing import Any

from fathom.agent.types import StopGateConfig

RESOLVED_STATUSES = ("done", "skipped", "blocked")
FEEDBACK_START = "<stop_gate_feedback>"
FEEDBACK_END = "</stop_gate_feedback>"

__all__ = ["FEEDBACK_END", "FEEDBACK_START", "RESOLVED_STATUSES", "StopGateConfig", "stop_gate_feedback"]


def _steps(plan: dict[str, Any]) -> str:
    return "\n".join(
        f"- {s['id']}: {s['name']} ({s.get('status', 'pending')})" for s in plan.get("steps", [])
    )


def stop_gate_feedback(
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
