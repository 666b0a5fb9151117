"""The mutable state of one agent-loop run (any provider), with the event and usage side effects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fathom.agent.events import AgentLoopEvent
from fathom.agent.system_tools.catalog import RunCatalog
from fathom.agent.types import AgentLoopInput, AgentLoopRuntime, AskPause, ToolChildPause
from fathom.agent.usage import AGENT_CALL_MODULE, AgentLoopUsage
from fathom.llm import count_message_tokens
from fathom.tools.contract import maybe_await


@dataclass
class RunState:
    """Everything one run tracks: transcript, ids, usages, plan, pause and stop flags."""

    input: AgentLoopInput
    runtime: AgentLoopRuntime
    catalog: RunCatalog
    messages: list[dict[str, Any]] = field(default_factory=list)
    assistant_messages: list[dict[str, Any]] = field(default_factory=list)
    request_ids: list[str] = field(default_factory=list)
    usages: list[AgentLoopUsage] = field(default_factory=list)
    active_plan: dict[str, Any] | None = None
    provider_state: dict[str, Any] | None = None
    context_checkpoint: str | None = None
    ask_pause: AskPause | None = None
    child_pause: ToolChildPause | None = None
    stop: bool = False
    error: str | None = None
    finish_reason: str = "stop"
    request_index: int = 0
    consecutive_tool_rounds: int = 0
    tools_since_plan_update: bool = False
    stop_gate_rejections: int = 0
    _token_cache: list[int] = field(default_factory=list)
    _tools_tokens: tuple[int, int] = (0, 0)

    @property
    def halted(self) -> bool:
        """A pause, stop flag, abort or error means no further tools or model calls."""
        return (
            self.ask_pause is not None
            or self.child_pause is not None
            or self.stop
            or self.error is not None
            or self.runtime.is_stopping()
        )

    async def emit(self, event: AgentLoopEvent) -> None:
        """Send an event to the runtime's sink (sync or async)."""
        if self.runtime.emit_event is not None:
            await maybe_await(self.runtime.emit_event(event))

    async def push(self, usages: list[AgentLoopUsage]) -> None:
        """Bill once: one ``usage_push`` call with these usages (nothing when empty)."""
        if not usages:
            return
        self.usages.extend(usages)
        if self.runtime.usage_push is not None:
            await maybe_await(self.runtime.usage_push(list(usages)))

    async def bill_model_call(self, model_id: str, input_tokens: int, output_tokens: int) -> AgentLoopUsage:
        """Bill one model request once (``agent_call``; no points when the user brought the key)."""
        config = self.runtime.model.config
        points = 0.0 if self.runtime.user_key else config.price(input_tokens, output_tokens)
        record = AgentLoopUsage(AGENT_CALL_MODULE, points, model_id, input_tokens, output_tokens)
        await self.push([record])
        return record

    def append(self, message: dict[str, Any], *, new: bool = True) -> None:
        """Append to the request transcript (and to this run's assistant messages when ``new``)."""
        self.messages.append(message)
        if new:
            self.assistant_messages.append(message)

    def token_count(self, tools: list[dict[str, Any]] | None) -> int:
        """Messages + tools tokens; per-message counts are cached, only new messages are counted."""
        cache = self._token_cache
        if len(cache) > len(self.messages):
            cache.clear()
        for message in self.messages[len(cache) :]:
            cache.append(count_message_tokens([message]) - 3)
        total = sum(cache) + (3 if cache else 0)
        if not tools:
            return total
        if self._tools_tokens[0] != id(tools):  # the schema list is fixed per run: count it once
            self._tools_tokens = (id(tools), count_message_tokens([], tools))
        return total + self._tools_tokens[1]

    def reset_token_cache(self) -> None:
        """Forget cached counts (after the transcript was replaced)."""
        self._token_cache.clear()
