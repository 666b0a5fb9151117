"""``readFiles``: reads the run's files (``fileUrlList``) into text through an injected file reader.

``services.file_reader`` is a :class:`FileReader` (production: the knowledge package's parsers
behind the egress-guarded download). Each file renders as ``File: {name}\\n<Content>\\n{text}\\n
</Content>``, joined by ``\\n******\\n``; a file that cannot be read contributes its error text instead
of failing the node. At most :data:`MAX_FILES` files are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from fathom.workflow.constants import FlowNodeType, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, ServiceUnavailableError, register_node

MAX_FILES = 20


@dataclass
class FileContent:
    """A file read for a workflow: its display name and extracted text."""

    name: str
    text: str


class FileReader(Protocol):
    """Reads one file URL of the run into text (raise to report a failure)."""

    async def read_file(self, url: str) -> FileContent | Mapping[str, Any]: ...


def _as_content(value: FileContent | Mapping[str, Any], url: str) -> FileContent:
    if isinstance(value, FileContent):
        return value
    return FileContent(name=str(value.get("name") or url), text=str(value.get("text") or ""))


def render_file(content: FileContent) -> str:
    """FastGPT's per-file block."""
    return f"File: {content.name}\n<Content>\n{content.text}\n</Content>"


@register_node(FlowNodeType.readFiles)
async def dispatch_read_files(ctx: NodeContext) -> DispatchResponse:
    """Input ``fileUrlList`` (list of URLs) → output ``system_text``."""
    reader: FileReader | None = getattr(ctx.services, "file_reader", None)
    if reader is None:
        raise ServiceUnavailableError(
            "The read files node needs a file reader service (services.file_reader)"
        )
    raw = ctx.params.get("fileUrlList") or []
    urls = [str(u) for u in (raw if isinstance(raw, list) else [raw]) if u][:MAX_FILES]
    blocks: list[str] = []
    read: list[dict[str, str]] = []
    for url in urls:
        try:
            content = _as_content(await reader.read_file(url), url)
        except Exception as exc:  # one bad file does not fail the node
            content = FileContent(name=url, text=f"Read file error: {exc}")
        blocks.append(render_file(content))
        read.append({"name": content.name, "url": url})
    text = "\n******\n".join(blocks)
    return DispatchResponse(
        data={NodeOutputKey.text: text},
        response_data={"readFiles": read, "readFilesResult": text[:1000]},
        tool_responses={"fileContent": text},
    )
