"""Entry points: :func:`run_workflow` (fresh run or resume from an interactive record) and
:func:`resume_workflow` (resume with the user's answer)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

from fathom.json_values import copy_json
from fathom.security.files import WorkflowFileStore, set_workflow_files
from fathom.workflow.constants import (
    WORKFLOW_MAX_CONCURRENCY,
    WORKFLOW_MAX_LOOP_TIMES,
    WORKFLOW_MAX_RUN_TIMES,
)
from fathom.workflow.dispatch import NodeRegistry, WorkflowServices, default_registry
from fathom.workflow.engine import StopSignal, UsageSink, WorkflowRun
from fathom.workflow.events import EventSink
from fathom.workflow.files import enter_root_file_context
from fathom.workflow.graph import WorkflowGraph, load_workflow
from fathom.workflow.interactive import get_last_interactive_value, parse_interactive
from fathom.workflow.result import WorkflowRunResult
from fathom.workflow.runtime import (
    build_runtime_edges,
    build_runtime_nodes,
    default_entry_node_ids,
    get_workflow_entry_node_ids,
    rewrite_node_output_by_histories,
    store_edges_to_runtime_edges,
)
from fathom.workflow.status import EdgeClassifier
from fathom.workflow.values import value_type_format
from fathom.workflow.variables import text_query

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _format_system_time(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M:%S} {_WEEKDAYS[moment.weekday()]}"


class _SecondClock:
    """``cTime`` of the current second, formatted once per second (every run of that second reads the
    same text: formatting costs more than the rest of a no-model run's variables)."""

    def __init__(self) -> None:
        self._second = -1
        self._text = ""

    def text(self) -> str:
        second = int(time.time())
        if second != self._second:
            self._text = _format_system_time(datetime.fromtimestamp(second, UTC))
            self._second = second
        return self._text


_CLOCK = _SecondClock()


def _system_time(now: datetime | None = None) -> str:
    """``cTime``: ``YYYY-MM-DD HH:mm:ss Weekday``."""
    return _format_system_time(now) if now is not None else _CLOCK.text()


def _build_variables(
    chat_config: dict[str, Any] | None,
    variables: dict[str, Any] | None,
    *,
    system: dict[str, Any],
    external: dict[str, Any] | None = None,
    secret_decoder: Any = None,
) -> dict[str, Any]:
    """The run's starting variables: external, then request variables typed by the app's variable
    config (matched by label first, then key, else the default), then system variables."""
    given = dict(variables or {})
    typed: dict[str, Any] = {}
    for item in (chat_config or {}).get("variables") or []:
        key = item.get("key")
        if not key:
            continue
        label = item.get("label")
        value_type = item.get("valueType")
        if item.get("type") == "password":
            raw = given.get(label) or given.get(key) or item.get("defaultValue")
            value = (
                secret_decoder.any_value_decrypt(raw)
                if secret_decoder is not None and raw is not None
                else raw
            )
            typed[key] = value_type_format(value, value_type)
        elif label is not None and given.get(label) is not None:
            typed[key] = value_type_format(given[label], value_type)
        elif given.get(key) is not None:
            typed[key] = value_type_format(given[key], value_type)
        else:
            typed[key] = value_type_format(copy_json(item.get("defaultValue")), value_type)
    return {**(external or {}), **given, **typed, **system}


async def run_workflow(
    graph: WorkflowGraph | dict[str, Any] | str,
    *,
    query: Any = None,
    variables: dict[str, Any] | None = None,
    histories: list[dict[str, Any]] | None = None,
    services: WorkflowServices | None = None,
    registry: NodeRegistry | None = None,
    emit: EventSink | None = None,
    last_interactive: dict[str, Any] | None = None,
    mode: str = "chat",
    max_run_times: float = WORKFLOW_MAX_RUN_TIMES,
    max_concurrency: int = WORKFLOW_MAX_CONCURRENCY,
    max_loop_times: int = WORKFLOW_MAX_LOOP_TIMES,
    stop: StopSignal | None = None,
    chat_id: str | None = None,
    response_chat_item_id: str | None = None,
    app_id: str | None = None,
    user_id: str | None = None,
    stream: bool = True,
    is_tool_call: bool = False,
    depth: int = 1,
    usage_id: str | None = None,
    usage_sink: UsageSink | None = None,
    external_variables: dict[str, Any] | None = None,
    entry_node_ids: list[str] | None = None,
    runtime_edges: list[dict[str, Any]] | None = None,
    node_outputs: dict[str, dict[str, Any]] | None = None,
    default_skip_node_queue: list[dict[str, Any]] | None = None,
    now: datetime | None = None,
    file_store: WorkflowFileStore | None = None,
) -> WorkflowRunResult:
    """Run a workflow graph (FastGPT JSON, dict or loaded graph) and return its result.

    With ``last_interactive`` (or a pending interactive at the end of ``histories``) the run resumes:
    it starts at the record's entry nodes, with its edge states, node outputs and skip queue.
    A debug step continues from a previous step's ``debug_response`` via ``entry_node_ids``,
    ``runtime_edges`` (its ``memoryEdges``), ``node_outputs`` (the previous result's) and
    ``default_skip_node_queue``. ``file_store`` is the root file context the entry prepared (the
    chat entry's seed-001 checks); without one a root run registers its external query and history
    files, and a child run uses the context derived for it.
    """
    loaded = graph if isinstance(graph, WorkflowGraph) else load_workflow(graph)
    histories = list(histories or [])
    if last_interactive is None and histories:
        last_interactive = get_last_interactive_value(histories)
    if isinstance(query, str):
        query = text_query(query)
    nodes = build_runtime_nodes(loaded)
    for node_id, values in (node_outputs or {}).items():
        if node_id in nodes:
            for output in nodes[node_id].outputs:
                if output.key in values:
                    output.value = values[output.key]
    services = services or WorkflowServices()
    skip_queue = default_skip_node_queue
    classifier: EdgeClassifier | None = None  # built for this run's edges alone
    if last_interactive is not None:
        record = parse_interactive(last_interactive)
        entries = get_workflow_entry_node_ids(loaded, record)
        edges = store_edges_to_runtime_edges(loaded.edges, record)
        rewrite_node_output_by_histories(nodes, record)
        skip_queue = skip_queue or record.get("skipNodeQueue")
        usage_id = record.get("usageId") or usage_id
        last_interactive = record
    else:
        entries = entry_node_ids or default_entry_node_ids(loaded)
        if runtime_edges is not None:
            edges = build_runtime_edges(runtime_edges)
        else:
            edges = store_edges_to_runtime_edges(loaded.edges)
            # the edges' groups, back edges and loops depend on the graph alone: analysed by its first run
            classifier = loaded.derived("edge_classifier", lambda: EdgeClassifier.of_nodes(nodes, edges))
    system = {
        "userId": user_id,
        "appId": app_id,
        "chatId": chat_id,
        "responseChatItemId": response_chat_item_id,
        "histories": histories,
        "cTime": _system_time(now),
    }
    run_variables = _build_variables(
        loaded.chat_config,
        variables,
        system=system,
        external=external_variables,
        secret_decoder=services.secrets,
    )
    run = WorkflowRun(
        nodes=nodes,
        edges=edges,
        registry=registry or default_registry,
        variables=run_variables,
        histories=histories,
        query=query,
        services=services,
        emit=emit,
        last_interactive=last_interactive,
        mode=mode,
        depth=depth,
        max_run_times=max_run_times,
        max_concurrency=max_concurrency,
        max_loop_times=max_loop_times,
        stop=stop,
        is_tool_call=is_tool_call,
        stream=stream,
        usage_id=usage_id,
        usage_sink=usage_sink,
        external_variable_keys=tuple(external_variables or ()),
        default_skip_node_queue=skip_queue,
        run_info={"appId": app_id, "chatId": chat_id, "responseChatItemId": response_chat_item_id},
        classifier=classifier,
    )
    token = (
        set_workflow_files(file_store)
        if file_store is not None
        else enter_root_file_context(query, histories, loaded.chat_config)
    )
    try:
        return await run.execute(entries)
    finally:
        if token is not None:
            token.var.reset(token)


def _answer_to_text(answer: Any) -> str:
    """The query text of a resume: a string as is, form values as JSON."""
    if isinstance(answer, str):
        return answer
    return json.dumps(answer, ensure_ascii=False)


async def resume_workflow(
    graph: WorkflowGraph | dict[str, Any] | str,
    interactive: dict[str, Any],
    answer: Any,
    **options: Any,
) -> WorkflowRunResult:
    """Resume a paused run with the user's answer (a selected option value, or form values)."""
    return await run_workflow(graph, query=_answer_to_text(answer), last_interactive=interactive, **options)
