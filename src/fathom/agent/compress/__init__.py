"""Context checkpoints and tool-response compression (spec §3.11, §3.12)."""

from fathom.agent.compress.checkpoint import (
    CHECKPOINT_SYSTEM_PROMPT,
    CheckpointOutcome,
    active_plan_block,
    checkpoint_content,
    compress_history,
    is_checkpoint_message,
    needs_checkpoint,
    normalize_checkpoint_content,
    restore_from_newest_checkpoint,
)
from fathom.agent.compress.constants import *  # noqa: F403
from fathom.agent.compress.constants import (
    checkpoint_target,
    get_compression_token_limit,
    message_threshold,
)
from fathom.agent.compress.text_cleanup import head_tail_truncate, regex_cleanup
from fathom.agent.compress.tool_response import (
    ToolCompressOutcome,
    compress_tool_response,
    json_structural_summary,
    light_process,
)

__all__ = [
    "CHECKPOINT_SYSTEM_PROMPT",
    "CheckpointOutcome",
    "ToolCompressOutcome",
    "active_plan_block",
    "checkpoint_content",
    "checkpoint_target",
    "compress_history",
    "compress_tool_response",
    "get_compression_token_limit",
    "head_tail_truncate",
    "is_checkpoint_message",
    "json_structural_summary",
    "light_process",
    "message_threshold",
    "needs_checkpoint",
    "normalize_checkpoint_content",
    "regex_cleanup",
    "restore_from_newest_checkpoint",
]
