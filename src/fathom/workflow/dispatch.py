"""The node → engine contract: :class:`DispatchResponse` (FastGPT's dispatch keys), the typed
:class:`NodeContext` a handler receives, injected :class:`WorkflowServices`, and the registry that
maps ``flowNodeType`` to an async handler.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from fathom.workflow.events import WorkflowEvent
from fathom.workflow.runtime import RuntimeNode
from fathom.workflow.variables import chat_value_to_text

if TYPE_CHECKING:
    from fathom.workflow.engine import WorkflowRun

#: Wire keys of a dispatch result (FastGPT ``DispatchNodeResponseKeyEnum``), by field name.
DISPATCH_KEYS: dict[str, str] = {
    "answer_text": "answerText",
    "reasoning_text": "reasoningText",
    "skip_handle_ids": "skipHandleId",
    "response_data": "responseData",
    "node_dispatch_usages": "nodeDispatchUsages",
    "children_responses": "childrenResponses",
    "tool_responses": "toolResponses",
    "assistant_responses": "assistantResponses",
    "rewrite_histories": "rewriteHistories",
    "interactive": "INTERACTIVE",
    "run_times": "runTimes",
    "new_variables": "newVariables",
    "system_memories": "system_memories",
}
_FIELD_BY_WIRE = {wire: name for name, wire in DISPATCH_KEYS.items()}
_FIELD_BY_WIRE["nodeResponse"] = "response_data"


@dataclass(slots=True)
class DispatchResponse:
    """What a node handler returns. ``data`` holds output values by key; ``error`` error outputs
    (routes to the ``catchError`` branch); the rest are FastGPT's dispatch keys."""

    data: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    answer_text: str | None = None
    reasoning_text: str | None = None
    skip_handle_ids: list[str] | None = None
    response_data: dict[str, Any] | None = None
    node_dispatch_usages: list[dict[str, Any]] | None = None
    children_responses: list[dict[str, Any]] | None = None
    tool_responses: Any = None
    assistant_responses: list[dict[str, Any]] | None = None
    rewrite_histories: list[dict[str, Any]] | None = None
    interactive: dict[str, Any] | None = None
    run_times: float = 1
    new_variables: dict[str, Any] | None = None
    system_memories: dict[str, Any] | None = None

    @classmethod
    def from_any(cls, value: DispatchResponse | Mapping[str, Any] | None) -> DispatchResponse:
        """Accept a model or a FastGPT-style dict (unknown top-level keys become output data)."""
        if value is None:
            return cls()
        if isinstance(value, DispatchResponse):
            return value
        result = cls()
        extra: dict[str, Any] = {}
        for key, item in value.items():
            if key in ("data", "error"):
                setattr(result, key, dict(item) if item is not None else None)
            elif key in _FIELD_BY_WIRE:
                setattr(result, _FIELD_BY_WIRE[key], item)
            elif key in DISPATCH_KEYS:
                setattr(result, key, item)
            else:
                extra[key] = item
        if extra:
            result.data = {**extra, **(result.data or {})}
        if result.run_times is None:
            result.run_times = 1
        return result

    def to_wire(self) -> dict[str, Any]:
        """FastGPT's dispatch result dict (unset keys omitted)."""
        out: dict[str, Any] = {}
        if self.data is not None:
            out["data"] = self.data
        if self.error is not None:
            out["error"] = self.error
        for name, wire in DISPATCH_KEYS.items():
            value = getattr(self, name)
            if value is not None and not (name == "run_times" and value == 1):
                out[wire] = value
        return out


class HttpClient(Protocol):
    """An httpx-like async client (the egress-guarded client in production)."""

    async def request(self, method: str, url: str, **kwargs: Any) -> Any: ...


class SecretResolver(Protocol):
    """Decrypts stored secrets (``fathom.security.SecretBox`` satisfies it)."""

    def get_secret_value(self, store_secret: Mapping[str, Any] | None = None) -> dict[str, str]: ...

    def any_value_decrypt(self, value: Any) -> Any: ...


@dataclass
class WorkflowServices:
    """External capabilities injected into a run; nodes that need a missing one fail with a node error."""

    http_client: HttpClient | None = None
    chat_model_factory: Any = None
    sandbox: Any = None
    dataset_search: Any = None
    child_app_runner: Any = None
    secrets: SecretResolver | None = None
    file_reader: Any = None
    tool_resolver: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


class ServiceUnavailableError(RuntimeError):
    """A node needs a service the run was not given."""


@dataclass(slots=True)
class NodeContext:
    """Everything a node handler may read: its node, resolved ``params`` and the run around it."""

    node: RuntimeNode
    params: dict[str, Any]
    run: WorkflowRun

    @property
    def node_id(self) -> str:
        """The node's id."""
        return self.node.node_id

    @property
    def variables(self) -> dict[str, Any]:
        """The run's global variables (mutable)."""
        return self.run.variables

    @property
    def histories(self) -> list[dict[str, Any]]:
        """The run's chat history (FastGPT chat items)."""
        return self.run.histories

    @property
    def query(self) -> Any:
        """The user's query (text or chat values)."""
        return self.run.query

    @property
    def query_text(self) -> str:
        """The text part of the query."""
        return chat_value_to_text(self.run.query)[0]

    @property
    def nodes(self) -> Mapping[str, RuntimeNode]:
        """All runtime nodes of the run, by id."""
        return self.run.nodes

    @property
    def services(self) -> WorkflowServices:
        """Injected services."""
        return self.run.services

    @property
    def last_interactive(self) -> dict[str, Any] | None:
        """The interactive record this run resumes, if any."""
        return self.run.last_interactive

    def emit(self, event: WorkflowEvent) -> None:
        """Send an event on the run's stream."""
        self.run.emit(event)


NodeHandler = Callable[[NodeContext], Awaitable[DispatchResponse | Mapping[str, Any] | None]]


class NodeRegistry:
    """``flowNodeType`` → handler. Copy the default registry to add or override nodes per run."""

    def __init__(self, handlers: Mapping[str, NodeHandler] | None = None, quick: Iterable[str] = ()) -> None:
        self._handlers: dict[str, NodeHandler] = dict(handlers or {})
        self._quick: set[str] = set(quick)  # types whose handler never awaits

    def register(self, *flow_node_types: str, waits: bool = True) -> Callable[[NodeHandler], NodeHandler]:
        """Decorator registering a handler for one or more node types. ``waits=False`` says the handler
        never awaits (it answers from the run's own state: no model, tool, child run or I/O), so a run
        that can be stopped may still call it in its own task rather than a task of its own: a stop
        cannot find it half way (``tests/workflow/test_quick_nodes.py`` holds every such handler to it)."""

        def decorate(handler: NodeHandler) -> NodeHandler:
            for flow_node_type in flow_node_types:
                self._handlers[flow_node_type] = handler
                if waits:
                    self._quick.discard(flow_node_type)
                else:
                    self._quick.add(flow_node_type)
            return handler

        return decorate

    def get(self, flow_node_type: str) -> NodeHandler | None:
        """The handler for a node type, if registered."""
        return self._handlers.get(flow_node_type)

    def waits(self, flow_node_type: str) -> bool:
        """Whether the type's handler may wait on something outside the run (registered without
        ``waits=False``, or not registered)."""
        return flow_node_type not in self._quick

    def copy(self) -> NodeRegistry:
        """An independent copy."""
        return NodeRegistry(self._handlers, self._quick)

    def __contains__(self, flow_node_type: object) -> bool:
        return flow_node_type in self._handlers

    def __iter__(self) -> Iterator[str]:
        return iter(self._handlers)


#: The registry the built-in nodes register into (see :mod:`fathom.workflow.nodes`).
default_registry = NodeRegistry()
register_node = default_registry.register
