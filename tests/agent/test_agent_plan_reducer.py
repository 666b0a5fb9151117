"""Plan reducer (spec §3.7.1): reply texts, validation errors, atomic updates."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fathom.agent.system_tools import is_plan_finished, run_set_plan, run_update_plan
from fathom.agent.system_tools.plan import _plan_progress_text

PLAN = {
    "planId": "plan_x",
    "name": "P",
    "steps": [
        {"id": "step_1", "name": "A", "status": "pending"},
        {"id": "step_2", "name": "B", "status": "in_progress"},
    ],
}


@pytest.mark.parametrize(
    ("raw", "reply"),
    [
        ("{bad", "Invalid set_plan arguments: arguments are not valid JSON."),
        ('{"name": "x"}', "Invalid set_plan arguments: steps must be a non-empty array of strings."),
        (
            '{"name": "x", "steps": []}',
            "Invalid set_plan arguments: steps must be a non-empty array of strings.",
        ),
        ('{"name": " ", "steps": ["a"]}', "Invalid set_plan arguments: name must be a non-empty string."),
        (
            '{"name": "x", "steps": ["a", 3]}',
            "Invalid set_plan arguments: steps must contain only non-empty strings.",
        ),
    ],
)
def test_set_plan_invalid_arguments_are_replies(raw: str, reply: str) -> None:
    outcome = run_set_plan(raw)
    assert (outcome.success, outcome.response, outcome.plan) == (False, reply, None)


def test_set_plan_reply_and_pending_steps_with_system_ids() -> None:
    outcome = run_set_plan(json.dumps({"name": "Ship", "steps": ["Build", "Test", "Release"]}))
    assert outcome.success and outcome.operation == "set_plan"
    assert outcome.message == 'Set active plan "Ship" with 3 step(s).'
    assert outcome.plan is not None
    assert [(s["id"], s["status"]) for s in outcome.plan["steps"]] == [
        ("step_1", "pending"),
        ("step_2", "pending"),
        ("step_3", "pending"),
    ]


@pytest.mark.parametrize(
    ("args", "plan", "reply", "operation"),
    [
        ({}, PLAN, "Invalid update_plan arguments: Provide updates, add_steps, or both.", "add_steps"),
        (
            {"updates": [{"id": "step_1", "status": "completed"}]},
            PLAN,
            "Invalid update_plan arguments: updates[0].status must be one of pending, in_progress, done, "
            "blocked, skipped. Use done instead of completed.",
            "update_steps",
        ),
        (
            {"updates": []},
            PLAN,
            "Invalid update_plan arguments: updates must be a non-empty array.",
            "update_steps",
        ),
        (
            {"add_steps": ["x"]},
            None,
            "Cannot update plan because no active plan exists. Use set_plan first.",
            "add_steps",
        ),
        (
            {"updates": [{"id": "step_1", "status": "done"}, {"id": "ghost", "status": "done"}]},
            PLAN,
            "Unknown plan step: ghost",
            "update_steps",
        ),
    ],
)
def test_update_plan_failures_leave_the_plan_unchanged(
    args: dict[str, object], plan: dict[str, object] | None, reply: str, operation: str
) -> None:
    before = copy.deepcopy(plan)
    outcome = run_update_plan(json.dumps(args), plan)
    assert (outcome.success, outcome.response, outcome.operation, outcome.plan) == (
        False,
        reply,
        operation,
        None,
    )
    assert plan == before


def test_update_then_add_reply_lists_progress_and_steps() -> None:
    outcome = run_update_plan(
        json.dumps(
            {
                "updates": [{"id": "step_2", "status": "blocked", "note": "waiting"}],
                "add_steps": ["C", "D"],
            }
        ),
        PLAN,
    )
    assert outcome.success and outcome.operation == "update_steps"
    assert outcome.response == (
        'Updated 1 plan step(s). Added plan step(s): "C", "D".\n'
        "Plan progress: 0 done, 0 in progress, 3 pending, 1 blocked, 0 skipped.\n"
        "Current plan steps:\n"
        "- step_1: A | status=pending\n"
        "- step_2: B | status=blocked | note=waiting\n"
        "- step_3: C | status=pending\n"
        "- step_4: D | status=pending"
    )
    assert PLAN["steps"][1]["status"] == "in_progress"  # the input is never mutated


def test_only_add_steps_is_the_add_steps_operation() -> None:
    outcome = run_update_plan('{"add_steps": ["Z"]}', PLAN)
    assert outcome.operation == "add_steps" and outcome.message == 'Added plan step(s): "Z".'


def test_finished_plan_is_all_done_or_skipped() -> None:
    steps = [{"id": "a", "name": "a", "status": "done"}, {"id": "b", "name": "b", "status": "skipped"}]
    assert is_plan_finished({"steps": steps})
    assert not is_plan_finished({"steps": [*steps, {"id": "c", "name": "c", "status": "blocked"}]})
    assert not is_plan_finished(None)
    assert _plan_progress_text({"steps": steps}).startswith("Plan progress: 1 done, 0 in progress, 0 pending")


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["step_1", "step_2", "step_3"]), st.sampled_from(["done", "blocked", "skipped"])
        ),
        min_size=1,
        max_size=5,
    )
)
def test_updates_are_all_or_nothing(updates: list[tuple[str, str]]) -> None:
    outcome = run_update_plan(json.dumps({"updates": [{"id": i, "status": s} for i, s in updates]}), PLAN)
    if any(step_id == "step_3" for step_id, _ in updates):
        assert not outcome.success and outcome.plan is None
    else:
        assert outcome.success and outcome.plan is not None
        final = {step_id: status for step_id, status in updates}
        assert {s["id"]: s["status"] for s in outcome.plan["steps"]} == {
            "step_1": final.get("step_1", "pending"),
            "step_2": final.get("step_2", "in_progress"),
        }


def test_legacy_plan_fields_are_read() -> None:
    from fathom.agent.system_tools import normalize_plan

    legacy = {"task": "Old", "steps": [{"title": "A", "status": "done"}, {"id": "s2", "title": "B"}]}
    assert normalize_plan(legacy) == {
        "name": "Old",
        "steps": [
            {"name": "A", "status": "done", "id": "step_1"},
            {"id": "s2", "name": "B", "status": "pending"},
        ],
    }
    assert normalize_plan(None) is None
