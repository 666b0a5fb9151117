"""The ``fastAgent`` provider (spec §3.6): Fathom's own agent loop."""

from fathom.agent.fast_agent.loop import INTERACTIVE_NOT_SUPPORTED, TOOL_CHOICE_NONE_AFTER, run_fast_agent
from fathom.agent.fast_agent.model_turn import EMPTY_RESPONSE_ERROR
from fathom.agent.fast_agent.prompt_mode import (
    ToolTextFilter,
    parse_tool_blocks,
    prompt_tools_instruction,
    to_prompt_messages,
)
from fathom.agent.fast_agent.stop_gate import StopGateConfig, stop_gate_feedback

__all__ = [
    "EMPTY_RESPONSE_ERROR",
    "StopGateConfig",
    "stop_gate_feedback",
    "INTERACTIVE_NOT_SUPPORTED",
    "TOOL_CHOICE_NONE_AFTER",
    "ToolTextFilter",
    "parse_tool_blocks",
    "prompt_tools_instruction",
    "run_fast_agent",
    "to_prompt_messages",
]
