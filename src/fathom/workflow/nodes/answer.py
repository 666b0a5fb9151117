"""``answerNode``: sends fixed or templated text to the user."""

from __future__ import annotations

import json
import re
from typing import Any

from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey, ValueType
from fathom.workflow.dispatch import DispatchResponse, NodeContext, register_node
from fathom.workflow.events import FastAnswerEvent

PASSAGE_CHARS = 700
"""A quoted passage longer than this is cut at a word boundary and ends with an ellipsis."""
_HEADING = re.compile(r"^#{1,6}\s+")


def _passage(text: str) -> str:
    """The chunk's lines as a blockquote (tables and lists keep their lines), headings as bold lines,
    cut after ``PASSAGE_CHARS`` at a line or word boundary."""
    lines: list[str] = []
    size = 0
    for raw in text.strip().splitlines():
        line = raw.rstrip()
        if _HEADING.match(line):
            line = f"**{_HEADING.sub('', line)}**"
        if size + len(line) > PASSAGE_CHARS:
            room = PASSAGE_CHARS - size
            if room > 80 and not line.startswith("|"):
                lines.append(line[:room].rsplit(" ", 1)[0] + " …")
            else:
                lines.append("…")
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(f"> {line}" if line else ">" for line in lines)


def _quotes_markdown(quotes: list[Any]) -> str:
    """Dataset quotes as readable markdown: one numbered passage per quote under its source name.

    Fathom's own rendering, used only when the answer input declares ``valueType: datasetQuote``
    (the demo app does; FastGPT's answer input is ``any``/``string`` and gets FastGPT's JSON)."""
    if not quotes:
        return "Nothing in the knowledge base matches this question."
    parts = []
    for number, quote in enumerate(quotes, 1):
        item = quote if isinstance(quote, dict) else {"q": str(quote)}
        text = "\n".join(part for part in (str(item.get("q") or ""), str(item.get("a") or "")) if part)
        source = str(item.get("sourceName") or "knowledge base")
        parts.append(f"**[{number}] {source}**\n\n{_passage(text)}")
    return "\n" + "\n\n".join(parts)  # a paragraph of its own after an earlier answer's line


def _format(text: Any, value_type: str | None) -> str:
    if isinstance(text, str):
        return text
    if value_type == ValueType.datasetQuote and isinstance(text, list):
        return _quotes_markdown(text)
    return json.dumps(text, ensure_ascii=False, indent=2)


@register_node(FlowNodeType.answerNode, waits=False)
async def dispatch_answer(ctx: NodeContext) -> DispatchResponse:
    """Streams ``"\\n" + text`` as ``fastAnswer`` and records it as answer text."""
    text = ctx.params.get(NodeInputKey.answerText)
    if text is None:
        text = ""
    text_input = ctx.node.input(NodeInputKey.answerText)
    formatted = _format(text, text_input.value_type if text_input is not None else None)
    response_text = f"\n{formatted}"
    ctx.emit(FastAnswerEvent(text=response_text, node_id=ctx.node_id))
    return DispatchResponse(
        data={NodeOutputKey.answerText: response_text},
        answer_text=response_text,
        response_data={"textOutput": formatted},
        tool_responses=response_text,
    )
