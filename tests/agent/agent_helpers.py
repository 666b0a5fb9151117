"""Helpers for the agent tests: a recorder of events and usage pushes, a runtime on the scripted server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fathom.agent import AgentLoopEvent, AgentLoopRuntime, AgentLoopUsage, registered_providers
from fathom.testing import ScriptedOpenAIServer


@dataclass
class Recorder:
    """Collects emitted events and every ``usage_push`` call (one list per call)."""

    events: list[AgentLoopEvent] = field(default_factory=list)
    pushes: list[list[AgentLoopUsage]] = field(default_factory=list)

    def emit(self, event: AgentLoopEvent) -> None:
        self.events.append(event)

    async def push(self, usages: list[AgentLoopUsage]) -> None:
        self.pushes.append(list(usages))

    @property
    def types(self) -> list[str]:
        return [event.type for event in self.events]

    def of(self, kind: str) -> list[Any]:
        return [event for event in self.events if event.type == kind]

    def pushed_modules(self) -> list[list[str]]:
        return [[usage.module_name for usage in push] for push in self.pushes]


def make_runtime(server: ScriptedOpenAIServer, recorder: Recorder, **options: Any) -> AgentLoopRuntime:
    """A runtime on the scripted server whose events and usage pushes go to ``recorder``."""
    model_options = options.pop("model_options", {})
    return AgentLoopRuntime(
        model=server.chat_model(**model_options),
        emit_event=recorder.emit,
        usage_push=recorder.push,
        **options,
    )


def all_providers() -> list[str]:
    """Every registered provider (the contract suite runs against each)."""
    return registered_providers()
