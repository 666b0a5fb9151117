"""The context checkpoint step (spec §3.11): before a model request, compress the history when the
transcript fills the model's window; bill it once and report ``after_message_compress``."""

from __future__ import annotations

from typing import Any

from fathom.agent.compress.checkpoint import compress_history, needs_checkpoint
from fathom.agent.events import AfterMessageCompress
from fathom.agent.kernel.state import RunState


async def checkpoint_when_full(state: RunState, tools: list[dict[str, Any]]) -> None:
    """Replace ``state.messages`` by a checkpoint when compression is on and the window is full."""
    runtime = state.runtime
    max_context = runtime.model.config.max_context
    count = state.token_count(tools)
    if not runtime.context_compression or not needs_checkpoint(count, max_context):
        return
    outcome = await compress_history(
        state.messages,
        runtime.compress_model or runtime.model,
        max_context=max_context,
        active_plan=state.active_plan,
        token_count=count,
        user_key=runtime.user_key,
        params=runtime.llm_params,
    )
    if outcome.usage is not None:
        await state.push([outcome.usage])
        state.request_ids.extend(outcome.request_ids)
    if outcome.status == "error":
        return
    if outcome.context_checkpoint is not None:
        state.messages = outcome.messages
        state.context_checkpoint = outcome.context_checkpoint
        state.reset_token_cache()
    await state.emit(
        AfterMessageCompress(
            outcome.request_ids,
            outcome.seconds,
            usages=[outcome.usage] if outcome.usage else None,
            context_checkpoint=outcome.context_checkpoint,
        )
    )
