"""The ``fastAgent`` provider (spec §3.6): Fathom's own agent loop over the kernel."""

from fathom.agent.fast_agent.loop import run_fast_agent
from fathom.agent.fast_agent.model_turn import EMPTY_RESPONSE_ERROR
from fathom.agent.fast_agent.prompt_mode import ToolTextFilter, parse_tool_blocks, to_prompt_messages

__all__ = [
    "EMPTY_RESPONSE_ERROR",
    "ToolTextFilter",
    "parse_tool_blocks",
    "run_fast_agent",
    "to_prompt_messages",
]
