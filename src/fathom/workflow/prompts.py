"""Prompt texts the LLM nodes share with FastGPT (default quote template and quote prompts)."""

from __future__ import annotations

from datetime import datetime

DEFAULT_QUOTE_TEMPLATE = "{{q}}\n{{a}}"
SYSTEM_PROMPT_SEPARATOR = "\n\n===---===---===\n\n"

_QUOTE_PROMPT_SYSTEM = (
    "使用 <Data></Data> 标记中的内容作为你的知识:\n\n<Data>\n{{quote}}\n</Data>\n\n"
    "回答要求：\n- 如果你不清楚答案，你需要澄清。\n- 避免提及你是从 <Data></Data> 获取的知识。\n"
    "- 保持答案与 <Data></Data> 中描述的一致。\n- 使用 Markdown 语法优化回答格式。\n"
    "- 使用与问题相同的语言回答。"
)
_QUOTE_PROMPT_USER = _QUOTE_PROMPT_SYSTEM + '\n\n问题:"""{{question}}"""'


def default_quote_prompt(role: str) -> str:
    """FastGPT's standard quote prompt; the ``user`` variant ends with the question."""
    return _QUOTE_PROMPT_USER if role == "user" else _QUOTE_PROMPT_SYSTEM


def format_quote_time(value: datetime | None) -> str:
    """``YYYY/MM/DD HH:mm`` (FastGPT ``formatTime2YMDHM``), empty when unknown."""
    return value.strftime("%Y/%m/%d %H:%M") if value else ""
