"""Local, model-free text clean-up shared by tool-response and large-content compression (spec §3.12)."""

from __future__ import annotations

import math
import re

from fathom.agent.compress.constants import APPROX_CHARS_PER_TOKEN, FINAL_HEAD_RATIO, TRUNCATED_MARKER
from fathom.llm import count_tokens

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
URL_PATTERN = re.compile(r"https?://[^\s)\]>\"']+")
BASE64_PATTERN = re.compile(r"(?:data:[\w/+.-]+;base64,)?[A-Za-z0-9+/]{100,}={0,2}")
_PATH = re.compile(r"(?<![\w.])(?:/[\w.-]+){2,}/([\w.-]+)")
_HEX_ID = re.compile(r"\b[0-9a-fA-F]{32,}\b")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_ISO_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b")
_SPACES = re.compile(r"[ \t]+")
_NEWLINES = re.compile(r"\n{3,}")


def regex_cleanup(text: str) -> str:
    """Images → ``[alt]``, URLs removed, long base64 → ``[BASE64_DATA]``, paths → basename, long hex ids,
    UUIDs and ISO timestamps removed, spaces collapsed, 3+ newlines → 2."""
    value = _IMAGE.sub(lambda m: f"[{m.group(1)}]", text)
    value = BASE64_PATTERN.sub("[BASE64_DATA]", value)
    value = URL_PATTERN.sub("", value)
    value = _PATH.sub(lambda m: m.group(1), value)
    value = _UUID.sub("", value)
    value = _HEX_ID.sub("", value)
    value = _ISO_TIME.sub("", value)
    value = _SPACES.sub(" ", value)
    value = "\n".join(line.rstrip() for line in value.split("\n"))
    return _NEWLINES.sub("\n\n", value).strip()


def head_tail_truncate(text: str, limit_tokens: int) -> str:
    """Deterministic truncation: ~60 % head and the rest tail (cut at paragraph breaks), marker between."""
    budget = max(1, limit_tokens * APPROX_CHARS_PER_TOKEN - len(TRUNCATED_MARKER))
    if len(text) <= budget:
        return text
    head_chars = math.floor(budget * FINAL_HEAD_RATIO)
    head = text[:head_chars]
    cut = head.rfind("\n\n")
    head = head[:cut] if cut > head_chars // 2 else head
    tail = text[len(text) - (budget - len(head)) :]
    cut = tail.find("\n\n")
    tail = tail[cut + 2 :] if 0 <= cut < len(tail) // 2 else tail
    result = head + TRUNCATED_MARKER + tail
    while count_tokens(result) > limit_tokens and len(head) + len(tail) > 8:
        head, tail = head[: math.floor(len(head) * 0.82)], tail[len(tail) - math.floor(len(tail) * 0.82) :]
        result = head + TRUNCATED_MARKER + tail
    return result
