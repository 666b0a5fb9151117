"""Plain domain types of the agent loop (seed 003, spec §3.2–§3.4): input, runtime, result, pause.

The kernel never sees workflows, chat items, SSE or storage: a caller builds an
:class:`AgentLoopInput` and an :class:`AgentLoopRuntime` (model client, tools, callbacks, optional
system-tool executors) and receives an :class:`AgentLoopResult`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from fathom.agent.events import AgentLoopEvent
from fathom.agent.usage import AgentLoopUsage
from fathom.llm.protocols import ChatModel
from fathom.tools import SignalLike, ToolResult

AgentLoopStatus = Literal["done", "paused", "aborted", "error"]

ExecuteTool = Callable[[dict[str, Any], list[dict[str, Any]]], Awaitable[Any]]
"""``execute_tool(call, messages)`` → a ToolResult, a text, or a FastGPT result dict."""

ExecuteInteractiveTool = Callable[[dict[str, Any], list[dict[str, Any]], dict[str, Any]], Awaitable[Any]]
"""``execute_interactive_tool(call, messages, children_interactive_params)`` (child-tool resume)."""

UsagePush = Callable[[list[AgentLoopUsage]], Any]
EmitEvent = Callable[[AgentLoopEvent], Any]


@runtime_checkable
class AgentSandboxClient(Protocol):
    """What the ``sandbox_*`` tools call (the runtime provides it; the kernel never imports a sandbox).

    Each method returns text (or any JSON-able value) for the model; raising reports a failure.
    A client may implement only some methods: a missing one answers with an error reply.
    """

    async def shell(self, command: str, timeout: float | None = None) -> Any: ...  # noqa: ASYNC109

    async def read_file(self, path: str, offset: int | None = None, limit: int | None = None) -> Any: ...

    async def write_file(self, path: str, content: str) -> Any: ...

    async def edit_file(
        self, path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> Any: ...

    async def grep(self, pattern: str, path: str | None = None, include: str | None = None) -> Any: ...

    async def find(self, pattern: str, path: str | None = None) -> Any: ...

    async def ls(self, path: str | None = None) -> Any: ...

    async def get_file_url(self, path: str) -> Any: ...


ReadFilesExecute = Callable[[dict[str, Any], dict[str, Any]], Awaitable[Any]]
"""``execute(args, call)`` for ``read_files``; ``args`` carries ``urls`` (or legacy ``ids``)."""

DatasetSearchExecute = Callable[[dict[str, Any], dict[str, Any]], Awaitable[Any]]
"""``execute(args, call)`` for ``dataset_search``; ``args = {query: [..]}`` after patching."""


@dataclass
class SandboxToolConfig:
    """``systemTools.sandbox``: enabled, with the runtime's sandbox client (None ⇒ not available)."""

    enabled: bool = True
    client: Any = None


@dataclass
class ReadFileToolConfig:
    """``systemTools.readFile``: the adapter's file reader (None ⇒ not available)."""

    enabled: bool = True
    execute: ReadFilesExecute | None = None
    max_file_amount: int = 20


@dataclass
class DatasetSearchToolConfig:
    """``systemTools.datasetSearch``: the search executor and this turn's input file URLs."""

    enabled: bool = True
    execute: DatasetSearchExecute | None = None
    current_input_files: Sequence[str] = ()


@dataclass
class SystemToolsConfig:
    """Which system tools are on (spec §3.3.2); anything missing or disabled is off."""

    plan: bool = False
    ask: bool = False
    sandbox: SandboxToolConfig | None = None
    read_file: ReadFileToolConfig | None = None
    dataset_search: DatasetSearchToolConfig | None = None


@dataclass
class StopGateConfig:
    """The stop gate (spec §3.8), off unless given: ``require_plan`` (the user explicitly asked for a
    plan) and ``max_rejections`` (``maxStopGateRejections``)."""

    require_plan: bool = False
    max_rejections: int = 3


@dataclass
class AgentLoopInput:
    """What the loop works on. ``messages`` are OpenAI-format dicts (or SDK models)."""

    messages: Sequence[Any] = ()
    system_prompt: str | None = None
    active_plan: dict[str, Any] | None = None
    provider_state: dict[str, Any] | None = None
    user_answer: str | None = None
    children_interactive_params: dict[str, Any] | None = None


@dataclass
class AgentLoopRuntime:
    """What the caller lends the loop: the model, tools, callbacks and limits (spec §3.3).

    ``tools`` are runtime tools (``ToolDefinition`` or seed-002/004 dicts); ``execute_tool`` overrides
    how they run (default: :func:`fathom.tools.run_tool` against ``tools``). ``signal`` (abort) and
    ``check_is_stopping`` are both consulted. ``user_key`` means the user's own key paid: points 0.
    ``prompt_mode``: ``raw`` sends ``system_prompt`` as given; ``fastAgent`` puts the agent guide of
    the offered system tools in front of it (:mod:`fathom.agent.system_prompt`).
    """

    model: ChatModel
    tools: Sequence[Any] = ()
    execute_tool: ExecuteTool | None = None
    execute_interactive_tool: ExecuteInteractiveTool | None = None
    usage_push: UsagePush | None = None
    emit_event: EmitEvent | None = None
    signal: SignalLike | None = None
    check_is_stopping: Callable[[], bool] | None = None
    system_tools: SystemToolsConfig = field(default_factory=SystemToolsConfig)
    max_run_agent_times: int = 100
    batch_tool_size: int = 5
    llm_params: dict[str, Any] = field(default_factory=dict)
    prompt_mode: Literal["fastAgent", "raw"] = "raw"
    stream: bool = True
    user_key: bool = False
    stop_gate: StopGateConfig | None = None
    compress_model: ChatModel | None = None
    context_compression: bool = True
    tool_response_compression: bool = True
    team_id: str | None = None
    lang: str | None = None

    def is_stopping(self) -> bool:
        """True when the abort signal is set or ``check_is_stopping()`` says so."""
        if self.signal is not None and self.signal.is_set():
            return True
        return bool(self.check_is_stopping()) if self.check_is_stopping is not None else False


@dataclass(frozen=True)
class AskPause:
    """``{type: 'ask', ask, askId}``."""

    ask: dict[str, Any]
    ask_id: str
    type: Literal["ask"] = "ask"

    def to_wire(self) -> dict[str, Any]:
        return {"type": self.type, "ask": self.ask, "askId": self.ask_id}


@dataclass(frozen=True)
class ToolChildPause:
    """``{type: 'tool_child', childrenResponse, toolCallId}``."""

    children_response: Any
    tool_call_id: str
    type: Literal["tool_child"] = "tool_child"

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "childrenResponse": self.children_response,
            "toolCallId": self.tool_call_id,
        }


AgentLoopPause = AskPause | ToolChildPause


@dataclass
class AgentLoopResult:
    """What a run produced (spec §3.4). ``completeMessages`` is the full transcript, and
    ``assistantMessages`` only this run's new assistant/tool messages; the answer is derived from them."""

    status: AgentLoopStatus
    complete_messages: list[dict[str, Any]]
    assistant_messages: list[dict[str, Any]]
    request_ids: list[str]
    usages: list[AgentLoopUsage]
    finish_reason: str = "stop"
    active_plan: dict[str, Any] | None = None
    provider_state: dict[str, Any] | None = None
    context_checkpoint: str | None = None
    pause: AgentLoopPause | None = None
    error: str | None = None

    @property
    def answer_text(self) -> str:
        """The text of the last assistant message of this run (convenience; not a stored field)."""
        for message in reversed(self.assistant_messages):
            content = message.get("content")
            if message.get("role") == "assistant" and isinstance(content, str) and content:
                return content
        return ""

    def to_wire(self) -> dict[str, Any]:
        """FastGPT's camelCase result dict."""
        wire: dict[str, Any] = {
            "status": self.status,
            "completeMessages": self.complete_messages,
            "assistantMessages": self.assistant_messages,
            "requestIds": self.request_ids,
            "usages": [usage.to_wire() for usage in self.usages],
            "finishReason": self.finish_reason,
        }
        for key, value in (
            ("activePlan", self.active_plan),
            ("providerState", self.provider_state),
            ("contextCheckpoint", self.context_checkpoint),
            ("error", self.error),
        ):
            if value is not None:
                wire[key] = value
        if self.pause is not None:
            wire["pause"] = self.pause.to_wire()
        return wire


def coerce_tool_result(value: Any) -> ToolResult:
    """A ToolResult from what an executor returned (result, text, camelCase or snake_case dict)."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult(response="")
    if isinstance(value, str):
        return ToolResult(response=value)
    if isinstance(value, Mapping) and "response" in value:
        return ToolResult.model_validate(dict(value))
    import json

    return ToolResult(response=json.dumps(value, ensure_ascii=False, default=str))


def skips_response_compress(result: ToolResult) -> bool:
    """True when the executor asked for ``skipResponseCompress``."""
    extra = result.model_extra or {}
    return bool(extra.get("skipResponseCompress") or extra.get("skip_response_compress"))
