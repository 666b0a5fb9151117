"""Compression constants (SRC ``compress/constants.ts``; spec §3.11.1) and the token-limit rule."""

from __future__ import annotations

import math

MESSAGE_THRESHOLD_RATIO = 0.8
CHECKPOINT_OUTPUT_TARGET_RATIO = 0.2
COMPRESSION_MIN_TOKEN_LIMIT = 4096
REQUEST_CHECKPOINT_COMPLETION_ACCEPT_CONTEXT_RATIO = 0.5
APPROX_CHARS_PER_TOKEN = 3
MERGED_COMPRESSION_MAX_ROUNDS = 2
FINAL_HEAD_RATIO = 0.6
SOURCE_ANCHOR_APPEND_SKIP_RATIO = 0.8
SOURCE_ANCHOR_APPEND_MAX_COUNT = 12
TOOL_RESPONSE_DIRECT_RETURN_CONTEXT_RATIO = 0.2
TOOL_RESPONSE_LIGHT_PROCESS_CONTEXT_RATIO = 0.5
DEPENDS_ON_THRESHOLD_RATIO = 0.15
FILE_READ_RESPONSE_MAX_RATIO = 0.5
CHUNK_SIZE_RATIO = 0.5
DATASET_SEARCH_SELECTION_RATIO = 0.2
CONTEXT_CHECKPOINT_START_TAG = "<context_checkpoint>"
CONTEXT_CHECKPOINT_END_TAG = "</context_checkpoint>"
ACTIVE_PLAN_START_TAG = "<active_plan>"
ACTIVE_PLAN_END_TAG = "</active_plan>"
TRUNCATED_MARKER = "\n\n... [content truncated: middle omitted to fit token budget] ...\n\n"


def get_compression_token_limit(max_context: int, ratio: float) -> int:
    """``min(maxContext, max(4096, floor(maxContext * ratio)))``."""
    return min(max_context, max(COMPRESSION_MIN_TOKEN_LIMIT, math.floor(max_context * ratio)))


def message_threshold(max_context: int) -> int:
    """Tokens (messages + tools schema) above which history is checkpointed."""
    return get_compression_token_limit(max_context, MESSAGE_THRESHOLD_RATIO)


def checkpoint_target(max_context: int) -> int:
    """Output budget of a checkpoint."""
    return get_compression_token_limit(max_context, CHECKPOINT_OUTPUT_TARGET_RATIO)
