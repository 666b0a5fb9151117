"""The plan system tools ``set_plan`` / ``update_plan`` and their reducer (spec §3.7.1).

A plan is ``{planId, name, steps: [{id, name, status, note?}]}``. Updates are atomic: an unknown step id
rejects the whole call and leaves the plan unchanged.
"""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass
from typing import Any, Literal

SET_PLAN = "set_plan"
UPDATE_PLAN = "update_plan"
STEP_STATUSES = ("pending", "in_progress", "done", "blocked", "skipped")
RESOLVED_STATUSES = ("done", "skipped", "blocked")

SET_PLAN_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SET_PLAN,
        "description": (
            "Create or replace the active plan for this task. Use it for multi-step work; each step gets "
            "an id you use later with update_plan."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Short name of the plan."},
                "steps": {
                    "type": "array",
                    "minItems": 1,
                    "items": {"type": "string"},
                    "description": "The steps, in order.",
                },
            },
            "required": ["name", "steps"],
        },
    },
}

UPDATE_PLAN_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": UPDATE_PLAN,
        "description": (
            "Update step statuses of the active plan and/or append steps. Statuses: pending, in_progress, "
            "done, blocked, skipped (use done instead of completed)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "updates": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "status": {"type": "string", "enum": list(STEP_STATUSES)},
                            "note": {"type": "string"},
                        },
                        "required": ["id", "status"],
                    },
                },
                "add_steps": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            },
        },
    },
}

Operation = Literal["set_plan", "add_steps", "update_steps"]


@dataclass(frozen=True)
class PlanOutcome:
    """What a plan tool call did: the reply for the model, the new plan (None on failure)."""

    operation: Operation
    success: bool
    response: str
    message: str
    plan: dict[str, Any] | None
    error: str | None = None
    params: Any = None


def normalize_plan(plan: dict[str, Any] | None) -> dict[str, Any] | None:
    """Read-compat for stored plans: ``task`` → ``name``, ``steps[].title`` → ``steps[].name``."""
    if not plan:
        return None
    result = copy.deepcopy(dict(plan))
    if "name" not in result and "task" in result:
        result["name"] = result.pop("task")
    steps = []
    for index, raw in enumerate(result.get("steps") or [], start=1):
        step = dict(raw)
        if "name" not in step and "title" in step:
            step["name"] = step.pop("title")
        step.setdefault("id", f"step_{index}")
        step.setdefault("status", "pending")
        steps.append(step)
    result["steps"] = steps
    return result


def _plan_progress_text(plan: dict[str, Any]) -> str:
    """``Plan progress: …`` + ``Current plan steps:`` + one line per step."""
    counts = {status: 0 for status in STEP_STATUSES}
    for step in plan.get("steps", []):
        counts[step.get("status", "pending")] = counts.get(step.get("status", "pending"), 0) + 1
    lines = [
        f"Plan progress: {counts['done']} done, {counts['in_progress']} in progress, "
        f"{counts['pending']} pending, {counts['blocked']} blocked, {counts['skipped']} skipped.",
        "Current plan steps:",
    ]
    for step in plan.get("steps", []):
        line = f"- {step['id']}: {step['name']} | status={step['status']}"
        if step.get("note"):
            line += f" | note={step['note']}"
        lines.append(line)
    return "\n".join(lines)


def is_plan_finished(plan: dict[str, Any] | None) -> bool:
    """True when every step is ``done`` or ``skipped`` (such a plan persists as ``null``)."""
    steps = (plan or {}).get("steps") or []
    return bool(steps) and all(step.get("status") in ("done", "skipped") for step in steps)


def _next_step_id(plan: dict[str, Any]) -> int:
    numbers = [0]
    for step in plan.get("steps", []):
        tail = str(step.get("id", "")).rsplit("_", 1)[-1]
        if tail.isdigit():
            numbers.append(int(tail))
    return max(numbers) + 1


def _decode(raw: str | None) -> Any:
    if raw is None or not raw.strip():
        return {}
    return json.loads(raw)


def _fail(operation: Operation, text: str, params: Any = None) -> PlanOutcome:
    return PlanOutcome(operation, False, text, text, None, error=text, params=params)


def _string_list(value: Any, field: str) -> str | None:
    if not isinstance(value, list) or not value:
        return f"{field} must be a non-empty array of strings"
    if not all(isinstance(item, str) and item.strip() for item in value):
        return f"{field} must contain only non-empty strings"
    return None


def run_set_plan(raw_args: str | None) -> PlanOutcome:
    """``set_plan{name, steps}``: a new plan, every step ``pending``."""
    try:
        args = _decode(raw_args)
    except ValueError:
        return _fail("set_plan", "Invalid set_plan arguments: arguments are not valid JSON.")
    if not isinstance(args, dict):
        return _fail("set_plan", "Invalid set_plan arguments: arguments must be a JSON object.")
    name = args.get("name")
    problem = None
    if not isinstance(name, str) or not name.strip():
        problem = "name must be a non-empty string"
    else:
        problem = _string_list(args.get("steps"), "steps")
    if problem:
        return _fail("set_plan", f"Invalid set_plan arguments: {problem}.", args)
    assert isinstance(name, str)
    steps = [
        {"id": f"step_{index}", "name": text.strip(), "status": "pending"}
        for index, text in enumerate(args["steps"], start=1)
    ]
    plan = {"planId": f"plan_{uuid.uuid4().hex[:12]}", "name": name.strip(), "steps": steps}
    message = f'Set active plan "{plan["name"]}" with {len(steps)} step(s).'
    return PlanOutcome(
        "set_plan", True, message + "\n" + _plan_progress_text(plan), message, plan, params=args
    )


def _check_updates(updates: Any) -> str | None:
    if not isinstance(updates, list) or not updates:
        return "updates must be a non-empty array"
    for index, update in enumerate(updates):
        if not isinstance(update, dict):
            return f"updates[{index}] must be an object"
        if not isinstance(update.get("id"), str) or not update["id"]:
            return f"updates[{index}].id must be a non-empty string"
        status = update.get("status")
        if status not in STEP_STATUSES:
            hint = " Use done instead of completed." if status == "completed" else ""
            return f"updates[{index}].status must be one of {', '.join(STEP_STATUSES)}.{hint}"
        if "note" in update and update["note"] is not None and not isinstance(update["note"], str):
            return f"updates[{index}].note must be a string"
    return None


def run_update_plan(raw_args: str | None, plan: dict[str, Any] | None) -> PlanOutcome:
    """``update_plan{updates?, add_steps?}`` applied atomically to ``plan`` (which is not mutated)."""
    try:
        args = _decode(raw_args)
    except ValueError:
        return _fail("add_steps", "Invalid update_plan arguments: arguments are not valid JSON.")
    if not isinstance(args, dict):
        return _fail("add_steps", "Invalid update_plan arguments: arguments must be a JSON object.")
    updates, add_steps = args.get("updates"), args.get("add_steps")
    operation: Operation = "update_steps" if isinstance(updates, list) else "add_steps"
    problem = None
    if updates is None and add_steps is None:
        problem = "Provide updates, add_steps, or both."
    elif updates is not None:
        problem = _check_updates(updates)
    if problem is None and add_steps is not None:
        problem = _string_list(add_steps, "add_steps")
    if problem:
        text = problem if problem.endswith(".") else problem + "."
        return _fail(operation, f"Invalid update_plan arguments: {text}", args)
    if not plan or not plan.get("steps"):
        return _fail(operation, "Cannot update plan because no active plan exists. Use set_plan first.", args)
    new_plan = copy.deepcopy(plan)
    by_id = {step["id"]: step for step in new_plan["steps"]}
    parts: list[str] = []
    if updates:
        for update in updates:
            if update["id"] not in by_id:
                return _fail(operation, f"Unknown plan step: {update['id']}", args)
        for update in updates:
            step = by_id[update["id"]]
            step["status"] = update["status"]
            if update.get("note"):
                step["note"] = update["note"]
        parts.append(f"Updated {len(updates)} plan step(s).")
    if add_steps:
        first = _next_step_id(new_plan)
        for offset, text in enumerate(add_steps):
            new_plan["steps"].append(
                {"id": f"step_{first + offset}", "name": text.strip(), "status": "pending"}
            )
        parts.append("Added plan step(s): " + ", ".join(f'"{text.strip()}"' for text in add_steps) + ".")
    message = " ".join(parts)
    return PlanOutcome(
        operation, True, message + "\n" + _plan_progress_text(new_plan), message, new_plan, params=args
    )
