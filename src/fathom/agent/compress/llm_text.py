"""One model call that returns text, usage and request id (used by the compressors)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fathom.agent.usage import AgentLoopUsage
from fathom.llm.protocols import ChatModel


@dataclass(frozen=True)
class TextCall:
    """What a compression call returned."""

    text: str
    finish_reason: str
    usage: AgentLoopUsage
    request_id: str


async def call_for_text(
    model: ChatModel,
    messages: list[dict[str, Any]],
    *,
    module_name: str,
    max_tokens: int,
    user_key: bool = False,
    params: dict[str, Any] | None = None,
) -> TextCall:
    """Stream one completion without tools and price it (points 0 when the user's key paid)."""
    extra = {k: v for k, v in (params or {}).items() if k in ("reasoning_effort", "temperature")}
    result = await model.stream(messages, max_tokens=max_tokens, **extra).collect()
    usage = result.usage
    points = 0.0 if user_key else model.config.price(usage.input_tokens, usage.output_tokens)
    return TextCall(
        text=result.content,
        finish_reason=result.finish_reason,
        usage=AgentLoopUsage(
            module_name=module_name,
            total_points=points,
            model_id=model.config.id,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
        ),
        request_id=result.request_id,
    )
