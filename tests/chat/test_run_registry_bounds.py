"""The registry of chat runs keeps finished runs for resumption within bounds: ``keep_s`` seconds and at
most ``keep_finished`` runs in all, the oldest finished dropped first, a running one never."""

from __future__ import annotations

from fathom.chat.channel import RunRegistry


def _finished(registry: RunRegistry, chat: str) -> None:
    channel = registry.open(("t", "a", chat), f"item-{chat}")
    channel.push("answer", {"text": chat})
    channel.close(outcome=chat)


def test_beyond_keep_finished_the_oldest_finished_runs_go_first() -> None:
    registry = RunRegistry(keep_finished=3)
    for number in range(6):
        _finished(registry, f"c{number}")
    kept = [f"c{n}" for n in range(6) if registry.get(("t", "a", f"c{n}")) is not None]
    assert kept == ["c3", "c4", "c5"]


def test_a_running_run_stays_however_many_finish_after_it() -> None:
    registry = RunRegistry(keep_finished=2)
    running = registry.open(("t", "a", "long"), "item-long")
    for number in range(5):
        _finished(registry, f"c{number}")
    assert registry.get(("t", "a", "long")) is running
    assert registry.running(("t", "a", "long"))
    assert sum(registry.get(("t", "a", f"c{n}")) is not None for n in range(5)) <= 2


def test_within_the_bounds_a_finished_run_can_still_be_resumed() -> None:
    registry = RunRegistry(keep_s=600, keep_finished=100)
    for number in range(50):
        _finished(registry, f"c{number}")
    channel = registry.get(("t", "a", "c0"))
    assert channel is not None and channel.frames[0].data == {"text": "c0"}
