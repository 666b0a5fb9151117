"""The Agent node's system-tool executors, each a catalog entry (seed 004: authorize → execute →
parse_output) bound to the running node.

- ``read_files``: authorized only for files of this conversation (this turn's and the histories');
  read through ``services.file_reader`` (the egress-guarded download in production).
- ``dataset_search``: authorized only when the node selected knowledge bases and the run has the
  search service (which checks the team's permission on each dataset); searches those datasets.
- ``sandbox_*``: a file workspace per app and chat (``services.extra["agent_workspace_root"]``, else
  the system temp directory); every path must stay inside it. It has no shell and no file URLs:
  ``sandbox_shell`` and ``sandbox_get_file_url`` answer that this sandbox does not support them.

Every output must be text (:class:`fathom.tools.ToolOutputError` otherwise); the kernel turns any
raised error into the model-visible ``Tool error: …`` reply.
"""

from __future__ import annotations

import fnmatch
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fathom.agent import DatasetSearchToolConfig, ReadFileToolConfig, SandboxToolConfig
from fathom.knowledge.search import SearchDatasetDataParams
from fathom.tools import BoundToolCatalog, ToolContext, ToolError, ToolOutputError, define_tool_catalog
from fathom.workflow.dispatch import NodeContext
from fathom.workflow.nodes.dataset import selected_dataset_ids
from fathom.workflow.nodes.read_files import FileContent, render_file

WORKSPACE_DIR = "/workspace"
MAX_LISTED = 200


class ToolNotAuthorizedError(ToolError, PermissionError):
    """The running node may not make this call."""


def _text_output(value: Any) -> str:
    """``parse_output`` of the system tools: the model gets text."""
    if not isinstance(value, str):
        raise ToolOutputError(f"expected text, got {type(value).__name__}")
    return value


class AgentToolHost:
    """What the catalog is bound to: the node, its files, datasets and workspace."""

    def __init__(
        self, ctx: NodeContext, *, files: Sequence[str], dataset_params: dict[str, Any] | None
    ) -> None:
        self.ctx = ctx
        self.files = list(files)
        self.dataset_params = dataset_params or {}
        self.dataset_ids = selected_dataset_ids(self.dataset_params.get("datasets"))
        self._workspace: Path | None = None

    @property
    def workspace(self) -> Path:
        if self._workspace is None:
            info = self.ctx.run.run_info
            root = self.ctx.services.extra.get("agent_workspace_root") or Path(tempfile.gettempdir())
            key = f"{info.get('appId') or 'app'}-{info.get('chatId') or 'debug'}"
            path = Path(root) / "fathom-agent-workspace" / re.sub(r"[^A-Za-z0-9_.-]", "_", key)
            path.mkdir(parents=True, exist_ok=True)
            self._workspace = path.resolve()
        return self._workspace

    def resolve(self, path: str | None) -> Path:
        """A workspace path (``/workspace/x``, ``x`` or ``./x``); refuses anything outside it."""
        raw = (path or ".").strip()
        if raw == WORKSPACE_DIR or raw.startswith(WORKSPACE_DIR + "/"):
            raw = raw[len(WORKSPACE_DIR) :].lstrip("/") or "."
        target = (self.workspace / raw.lstrip("/")).resolve()
        if target != self.workspace and not target.is_relative_to(self.workspace):
            raise ToolNotAuthorizedError(f"Path {path} is outside the sandbox workspace {WORKSPACE_DIR}")
        return target

    def shown(self, path: Path) -> str:
        rel = path.relative_to(self.workspace).as_posix()
        return WORKSPACE_DIR if rel == "." else f"{WORKSPACE_DIR}/{rel}"


# ------------------------------------------------------------------------------------ read_files
def _authorize_read(params: dict[str, Any], tc: ToolContext) -> None:
    host: AgentToolHost = tc.app
    if host.ctx.services.file_reader is None:
        raise ToolNotAuthorizedError("This run has no file reader")
    for url in params.get("urls") or []:
        if str(url) not in host.files:
            raise ToolNotAuthorizedError(f"File {url} is not part of this conversation")


async def _read(params: dict[str, Any], tc: ToolContext) -> str:
    reader = tc.app.ctx.services.file_reader
    blocks = []
    for url in params.get("urls") or []:
        try:
            value = await reader.read_file(str(url))
            content = (
                value
                if isinstance(value, FileContent)
                else FileContent(name=str(value.get("name") or url), text=str(value.get("text") or ""))
            )
        except Exception as exc:
            content = FileContent(name=str(url), text=f"Read file error: {exc}")
        blocks.append(render_file(content))
    return "\n******\n".join(blocks)


# ------------------------------------------------------------------------------------ dataset_search
def _authorize_search(params: dict[str, Any], tc: ToolContext) -> None:
    host: AgentToolHost = tc.app
    if host.ctx.services.dataset_search is None:
        raise ToolNotAuthorizedError("This run has no knowledge base search")
    if not host.dataset_ids:
        raise ToolNotAuthorizedError("The Agent node has no knowledge base selected")


def _is_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))


async def _search(params: dict[str, Any], tc: ToolContext) -> str:
    host: AgentToolHost = tc.app
    queries = [q for q in params.get("query") or [] if isinstance(q, str) and q.strip() and not _is_url(q)]
    if not queries:
        return "No search query given: send query as a list of search phrases."
    settings = host.dataset_params
    request = SearchDatasetDataParams.model_validate(
        {
            "queries": queries,
            "reRankQuery": queries[0],
            "datasetIds": host.dataset_ids,
            "similarity": settings.get("similarity", 0),
            "limit": settings.get("limit") or 5000,
            "searchMode": settings.get("searchMode") or "embedding",
            "embeddingWeight": settings.get("embeddingWeight", 0.5),
            "usingReRank": bool(settings.get("usingReRank")),
            "rerankWeight": settings.get("rerankWeight", 0.5),
        }
    )
    response = await host.ctx.services.dataset_search(request)
    if not response.search_res:
        return "No matching content in the knowledge bases."
    return "\n------\n".join(
        f"<source>{item.source_name}</source>\n{item.q}\n{item.a or ''}".strip()
        for item in response.search_res
    )


# ------------------------------------------------------------------------------------ sandbox
def _authorize_path(params: dict[str, Any], tc: ToolContext) -> None:
    tc.app.resolve(params.get("path"))


async def _sandbox_read(params: dict[str, Any], tc: ToolContext) -> str:
    target = tc.app.resolve(params["path"])
    if not target.is_file():
        return f"No such file: {params['path']}"
    lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
    offset = int(params.get("offset") or 0)
    limit = params.get("limit")
    chosen = lines[offset : offset + int(limit)] if limit else lines[offset:]
    return "\n".join(chosen)


async def _sandbox_write(params: dict[str, Any], tc: ToolContext) -> str:
    target = tc.app.resolve(params["path"])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(str(params["content"]), encoding="utf-8")
    return f"Wrote {len(str(params['content']))} characters to {tc.app.shown(target)}"


async def _sandbox_edit(params: dict[str, Any], tc: ToolContext) -> str:
    target = tc.app.resolve(params["path"])
    if not target.is_file():
        return f"No such file: {params['path']}"
    text = target.read_text(encoding="utf-8")
    old, new = str(params["old_string"]), str(params["new_string"])
    count = text.count(old) if old else 0
    if count == 0:
        return f"old_string was not found in {tc.app.shown(target)}"
    if count > 1 and not params.get("replace_all"):
        return (
            f"old_string occurs {count} times in {tc.app.shown(target)}: set replace_all or give more context"
        )
    target.write_text(text.replace(old, new) if params.get("replace_all") else text.replace(old, new, 1))
    return f"Edited {tc.app.shown(target)} ({count if params.get('replace_all') else 1} replacement(s))"


def _files_under(host: AgentToolHost, path: str | None) -> list[Path]:
    base = host.resolve(path)
    if base.is_file():
        return [base]
    return sorted(p for p in base.rglob("*") if p.is_file())[: MAX_LISTED * 10]


async def _sandbox_grep(params: dict[str, Any], tc: ToolContext) -> str:
    try:
        pattern = re.compile(str(params["pattern"]))
    except re.error as exc:
        return f"Invalid pattern: {exc}"
    include = params.get("include")
    hits = []
    for file in _files_under(tc.app, params.get("path")):
        if include and not fnmatch.fnmatch(file.name, str(include)):
            continue
        for number, line in enumerate(file.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if pattern.search(line):
                hits.append(f"{tc.app.shown(file)}:{number}: {line}")
    return "\n".join(hits[:MAX_LISTED]) or "No matches"


async def _sandbox_find(params: dict[str, Any], tc: ToolContext) -> str:
    pattern = str(params["pattern"])
    found = [
        tc.app.shown(f)
        for f in _files_under(tc.app, params.get("path"))
        if fnmatch.fnmatch(f.relative_to(tc.app.workspace).as_posix(), pattern)
        or fnmatch.fnmatch(f.name, pattern)
    ]
    return "\n".join(found[:MAX_LISTED]) or "No files found"


async def _sandbox_ls(params: dict[str, Any], tc: ToolContext) -> str:
    base = tc.app.resolve(params.get("path"))
    if not base.is_dir():
        return f"No such directory: {params.get('path') or WORKSPACE_DIR}"
    rows = [f"{p.name}/" if p.is_dir() else p.name for p in sorted(base.iterdir())]
    return "\n".join(rows[:MAX_LISTED]) or "(empty)"


def _entry(tool_id: str, kind: str, authorize: Any, execute: Any) -> dict[str, Any]:
    return {
        "id": tool_id,
        "kind": kind,
        "description": tool_id,
        "inputSchema": {"type": "object"},
        "authorize": authorize,
        "execute": execute,
        "parseOutput": _text_output,
    }


AGENT_SYSTEM_TOOL_CATALOG = define_tool_catalog(
    [
        _entry("read_files", "read", _authorize_read, _read),
        _entry("dataset_search", "read", _authorize_search, _search),
        _entry("sandbox_read_file", "sandbox", _authorize_path, _sandbox_read),
        _entry("sandbox_write_file", "sandbox", _authorize_path, _sandbox_write),
        _entry("sandbox_edit_file", "sandbox", _authorize_path, _sandbox_edit),
        _entry("sandbox_grep", "sandbox", _authorize_path, _sandbox_grep),
        _entry("sandbox_find", "sandbox", _authorize_path, _sandbox_find),
        _entry("sandbox_ls", "sandbox", _authorize_path, _sandbox_ls),
    ]
)


class CatalogSandboxClient:
    """The ``AgentSandboxClient`` the kernel calls: each method is one catalog invocation."""

    def __init__(self, tools: BoundToolCatalog) -> None:
        self._tools = tools

    async def _invoke(self, tool_id: str, **params: Any) -> Any:
        return (await self._tools.invoke(tool_id, {k: v for k, v in params.items() if v is not None})).value

    async def read_file(self, path: str, offset: int | None = None, limit: int | None = None) -> Any:
        return await self._invoke("sandbox_read_file", path=path, offset=offset, limit=limit)

    async def write_file(self, path: str, content: str) -> Any:
        return await self._invoke("sandbox_write_file", path=path, content=content)

    async def edit_file(self, path: str, old_string: str, new_string: str, replace_all: bool = False) -> Any:
        return await self._invoke(
            "sandbox_edit_file",
            path=path,
            old_string=old_string,
            new_string=new_string,
            replace_all=replace_all,
        )

    async def grep(self, pattern: str, path: str | None = None, include: str | None = None) -> Any:
        return await self._invoke("sandbox_grep", pattern=pattern, path=path, include=include)

    async def find(self, pattern: str, path: str | None = None) -> Any:
        return await self._invoke("sandbox_find", pattern=pattern, path=path)

    async def ls(self, path: str | None = None) -> Any:
        return await self._invoke("sandbox_ls", path=path)


def agent_system_tools(
    ctx: NodeContext,
    *,
    files: Sequence[str],
    dataset_params: dict[str, Any] | None,
    sandbox: bool,
) -> tuple[ReadFileToolConfig | None, DatasetSearchToolConfig | None, SandboxToolConfig | None]:
    """The node's read_files / dataset_search / sandbox configs, their executors bound to the catalog
    (each off when the node is not configured for it or the run lacks the service)."""
    host = AgentToolHost(ctx, files=files, dataset_params=dataset_params)
    bound = AGENT_SYSTEM_TOOL_CATALOG.bind(app=host)

    async def read(args: dict[str, Any], call: dict[str, Any]) -> Any:
        return (await bound.invoke("read_files", {"urls": args.get("urls") or []})).value

    async def search(args: dict[str, Any], call: dict[str, Any]) -> Any:
        return (await bound.invoke("dataset_search", {"query": args.get("query") or []})).value

    read_config = ReadFileToolConfig(execute=read) if ctx.services.file_reader is not None and files else None
    search_config = (
        DatasetSearchToolConfig(execute=search, current_input_files=list(files))
        if host.dataset_ids and ctx.services.dataset_search is not None
        else None
    )
    sandbox_config = SandboxToolConfig(client=CatalogSandboxClient(bound)) if sandbox else None
    return read_config, search_config, sandbox_config
