"""Context checkpoints and tool-response compression (spec §3.11, §3.12)."""

from fathom.agent.compress.checkpoint import (
    CHECKPOINT_SYSTEM_PROMPT,
    CheckpointOutcome,
    compress_history,
    needs_checkpoint,
    restore_from_newest_checkpoint,
)
from fathom.agent.compress.constants import *  # noqa: F403
from fathom.agent.compress.constants import (
    checkpoint_target,
    get_compression_token_limit,
    message_threshold,
)
from fathom.agent.compress.text_cleanup import head_tail_truncate, regex_cleanup
from fathom.agent.compress.tool_response import ToolCompressOutcome, compress_tool_response

__all__ = [
    "CHECKPOINT_SYSTEM_PROMPT",
    "CheckpointOutcome",
    "ToolCompressOutcome",
    "checkpoint_target",
    "compress_history",
    "compress_tool_response",
    "get_compression_token_limit",
    "head_tail_truncate",
    "message_threshold",
    "needs_checkpoint",
    "regex_cleanup",
    "restore_from_newest_checkpoint",
]
