"""A Fathom app exposed as a tool: the protocol and the adapter shape only.

The tool layer cannot run apps (apps live in ``fathom.workflow`` / ``fathom.chat``, above it). It
defines what it needs from them, :class:`AppRunner`, and :func:`app_tool` turns one app into a
:class:`ToolDefinition`. The workflow package supplies the runner (spec §4.8, ``dispatchRunAppNode``):
it resolves the app version, checks the running app's member may read the child app, runs it as a
child, maps its answer text to the tool response, its usages to ``usages`` and a child pause to
``interactive`` (``childrenInteractive``). **Not wired yet: the workflow issue provides the runner.**
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from fathom.tools.cancel import SignalLike
from fathom.tools.contract import ToolCall, ToolContext, ToolDefinition, ToolResult

__all__ = ["AppRunRequest", "AppRunResponse", "AppRunner", "DEFAULT_APP_TOOL_PARAMETERS", "app_tool"]

DEFAULT_APP_TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"userChatInput": {"type": "string", "description": "The question or task for the app"}},
    "required": ["userChatInput"],
}


@dataclass
class AppRunRequest:
    """One child-app run: the app (and pinned version), the model's params (``userChatInput`` plus
    any app variables), the conversation so far and the cancellation signal."""

    app_id: str
    params: dict[str, Any]
    messages: Sequence[Any]
    call: ToolCall
    signal: SignalLike
    version: str | None = None
    parent_app: Any = None


@dataclass
class AppRunResponse:
    """What a child run produced (the fields of spec §4.8.7 the tool layer needs)."""

    text: str
    usages: list[dict[str, Any]] = field(default_factory=list)
    assistant_messages: list[dict[str, Any]] = field(default_factory=list)
    interactive: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class AppRunner(Protocol):
    """Runs a Fathom app as a child (implemented by the workflow package)."""

    async def run_app(self, request: AppRunRequest) -> AppRunResponse: ...


def app_tool(
    app_id: str,
    runner: AppRunner,
    *,
    name: str,
    description: str = "",
    parameters: dict[str, Any] | None = None,
    version: str | None = None,
) -> ToolDefinition:
    """A :class:`ToolDefinition` that runs app ``app_id`` through ``runner``."""

    async def execute(ctx: ToolContext) -> ToolResult:
        params = dict(ctx.params or {})
        if not str(params.get("userChatInput") or "").strip() and not params.get("fileUrlList"):
            raise ValueError("Input is empty")
        response = await runner.run_app(
            AppRunRequest(
                app_id=app_id,
                params=params,
                messages=ctx.messages,
                call=ctx.call,
                signal=ctx.signal,
                version=version,
                parent_app=ctx.app,
            )
        )
        return ToolResult(
            response=response.text,
            usages=response.usages,
            assistant_messages=response.assistant_messages,
            interactive=response.interactive,
            metadata={"appId": app_id, **response.metadata},
        )

    return ToolDefinition(
        name=name,
        description=description,
        parameters=parameters if parameters is not None else DEFAULT_APP_TOOL_PARAMETERS,
        execute=execute,
        kind="app",
        metadata={"appId": app_id, "version": version},
    )
