"""``appModule`` (and legacy ``app``): run another app's workflow as a child (spec §4.8, seed 001).

The child app comes from ``services.child_app_runner`` (a :class:`ChildAppLoader`), which resolves
the pinned version (valid pinned version → published pointer → latest published) and checks the
running member's read permission on the child; this node maps inputs, runs the child one level
deeper in a derived file context (only the files selected for it under the parent's quota: its input
first, then history newest first; deep copies), with only the histories the node's ``history``
setting selects, and maps answer, history, usage (points and tokens on one line, quotes) and pauses
back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from fathom.security.files import (
    DerivedWorkflowFiles,
    WorkflowFileError,
    run_with_derived_workflow_file_context,
)
from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, ServiceUnavailableError, register_node
from fathom.workflow.events import AnswerEvent
from fathom.workflow.nodes.chat import node_error
from fathom.workflow.result import WorkflowRunResult, cited_quotes
from fathom.workflow.run import run_workflow
from fathom.workflow.variables import chat_value_to_text, get_histories, text_query

_OWN_KEYS = {NodeInputKey.userChatInput, NodeInputKey.history, "fileUrlList", NodeInputKey.forbidStream}


@dataclass
class ChildApp:
    """A loaded child app: its workflow (FastGPT JSON or graph) and what the node response shows."""

    app_id: str
    name: str
    workflow: Any
    avatar: str = ""
    can_write: bool = False


class ChildAppLoader(Protocol):
    """Loads a child app version the running app may read (raise LookupError / PermissionError)."""

    async def load_child_app(self, app_id: str, version: str | None) -> ChildApp: ...


def child_usage(name: str, result: WorkflowRunResult) -> dict[str, Any]:
    """The one usage line of a child run on its parent's node: the child's points and its input /
    output tokens summed (FastGPT pushes the child's ``flowUsages`` points and merges its tokens)."""
    line: dict[str, Any] = {"moduleName": name, "totalPoints": result.total_points}
    for key in ("inputTokens", "outputTokens"):
        line[key] = sum(int(u.get(key) or 0) for u in result.flow_usages)
    return line


def _user_item(text: str, files: list[str]) -> dict[str, Any]:
    values: list[dict[str, Any]] = [{"type": "file", "file": {"type": "file", "url": url}} for url in files]
    if text:
        values.append({"type": "text", "text": {"content": text}})
    return {"obj": "Human", "value": values}


@register_node(FlowNodeType.appModule, FlowNodeType.runApp)
async def dispatch_run_app_node(ctx: NodeContext) -> DispatchResponse:
    """Outputs ``answerText`` and ``history``; a pause inside the child becomes ``childrenInteractive``."""
    loader: ChildAppLoader | None = ctx.services.child_app_runner
    if loader is None:
        raise ServiceUnavailableError("The app node needs the child app service")
    params = ctx.params
    text = str(params.get(NodeInputKey.userChatInput) or "")
    files = [str(u) for u in params.get("fileUrlList") or [] if u]
    if not text and not files:
        return node_error("Input is empty")
    app_id = ctx.node.plugin_id
    if not app_id:
        return node_error("pluginId is empty")
    try:
        app = await loader.load_child_app(app_id, ctx.node.version)
    except Exception as exc:
        return node_error(str(exc) or exc.__class__.__name__)
    last = ctx.last_interactive
    resuming = bool(
        last and last.get("type") == "childrenInteractive" and ctx.node_id in last.get("entryNodeIds", [])
    )
    child_record = (last or {}).get("params", {}).get("childrenResponse") if resuming else None
    forbid_stream = bool(params.get(NodeInputKey.forbidStream))
    histories = get_histories(params.get(NodeInputKey.history), ctx.histories)
    child_variables = {k: v for k, v in params.items() if k not in _OWN_KEYS}
    if not files and not resuming:  # FastGPT: no fileUrlList → the current query's files
        files = [str(f.get("url")) for f in chat_value_to_text(ctx.query)[1] if f.get("url")]
    if not forbid_stream:
        ctx.emit(AnswerEvent(text="\n", node_id=ctx.node_id))
    info = ctx.run.run_info
    query: Any = (
        ctx.query
        if resuming
        else [
            *({"type": "file", "file": {"type": "file", "url": url}} for url in files),
            *text_query(text),
        ]
    )

    seen: list[DerivedWorkflowFiles] = []

    async def run_child(derived: DerivedWorkflowFiles) -> WorkflowRunResult:
        seen.append(derived)
        return await run_workflow(
            app.workflow,
            query=derived.query,
            variables=child_variables,
            histories=derived.histories,
            services=ctx.services,
            registry=ctx.run.registry,
            emit=None if forbid_stream else ctx.run.emit,
            last_interactive=child_record,
            depth=ctx.run.depth + 1,
            max_run_times=ctx.run.max_run_times,
            stop=ctx.run.stop,
            stream=ctx.run.stream and not forbid_stream,
            chat_id=info.get("chatId"),
            response_chat_item_id=info.get("responseChatItemId"),
            app_id=app.app_id,
        )

    try:
        result = await run_with_derived_workflow_file_context(
            run_child, files=[], query=query, histories=histories
        )
    except WorkflowFileError as exc:
        return node_error(str(exc))
    answer = result.answer_text
    responses = [item for item in result.assistant_responses if item.get("type") != "interactive"]
    kept = seen[0].histories if seen else histories
    child_files = (
        [str(f["url"]) for f in chat_value_to_text(seen[0].query)[1] if f.get("url")] if seen else files
    )
    history = [*kept] if resuming else [*kept, _user_item(text, child_files)]
    history.append({"obj": "AI", "value": responses})
    total = result.total_points
    quotes = cited_quotes(result.flow_responses)  # the child's, so the parent's answer can show them
    return DispatchResponse(
        data={NodeOutputKey.answerText: answer, NodeOutputKey.history: history},
        assistant_responses=[] if forbid_stream else responses,
        interactive=(
            {"type": "childrenInteractive", "params": {"childrenResponse": result.interactive}}
            if result.interactive
            else None
        ),
        response_data={
            "moduleLogo": app.avatar,
            "totalPoints": total,
            "query": text,
            "textOutput": answer,
            "pluginDetail": result.flow_responses if app.can_write else None,
            "mergeSignId": ctx.node_id,
            **({"quoteList": quotes} if quotes else {}),
        },
        node_dispatch_usages=[child_usage(app.name, result)],
        tool_responses=answer,
        run_times=max(1.0, result.run_times),
    )
