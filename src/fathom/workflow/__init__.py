"""fathom.workflow: FastGPT-compatible workflow graphs, the run/skip/wait engine, variables and
templates, interactive pause/resume and the built-in nodes.

Load a graph with :func:`load_workflow`, run it with :func:`run_workflow`, resume a pause with
:func:`resume_workflow`. Nodes are handlers registered by ``flowNodeType``
(:data:`default_registry`); external capabilities come in through :class:`WorkflowServices`.
"""

from fathom.workflow import nodes as _nodes  # noqa: F401  (registers the built-in nodes)
from fathom.workflow.constants import (
    KNOWN_NODE_TYPES,
    SYSTEM_VARIABLE_KEYS,
    VARIABLE_NODE_ID,
    WORKFLOW_MAX_DEPTH,
    WORKFLOW_MAX_RUN_TIMES,
    FlowNodeType,
    NodeInputKey,
    NodeOutputKey,
    ValueType,
    error_handle_id,
    get_handle_id,
)
from fathom.workflow.dispatch import (
    DispatchResponse,
    HttpClient,
    NodeContext,
    NodeHandler,
    NodeRegistry,
    SecretResolver,
    ServiceUnavailableError,
    WorkflowServices,
    default_registry,
    register_node,
)
from fathom.workflow.engine import WorkflowRun
from fathom.workflow.events import (
    AnswerEvent,
    EventSink,
    FastAnswerEvent,
    InteractiveEvent,
    NodeResponseEvent,
    NodeStatusEvent,
    ToolEvent,
    UpdateVariablesEvent,
    WorkflowDurationEvent,
    WorkflowEvent,
    event_name,
    text_adapt_gpt_response,
)
from fathom.workflow.graph import (
    NodeInput,
    NodeOutput,
    WorkflowEdge,
    WorkflowGraph,
    WorkflowGraphError,
    WorkflowNode,
    load_workflow,
)
from fathom.workflow.interactive import (
    INTERACTIVE_RECORD_VERSION,
    InteractiveRecord,
    get_last_interactive_value,
    is_pending_interactive,
    mark_interactive_answered,
    parse_interactive,
)
from fathom.workflow.result import WorkflowRunResult
from fathom.workflow.run import resume_workflow, run_workflow
from fathom.workflow.runtime import RuntimeEdge, RuntimeNode
from fathom.workflow.status import EdgeClassifier, decide_run_status
from fathom.workflow.values import value_type_format
from fathom.workflow.variables import (
    get_histories,
    get_reference_variable_value,
    remove_system_variable,
    replace_editor_variable,
    replace_variable,
)

__all__ = [
    "INTERACTIVE_RECORD_VERSION",
    "KNOWN_NODE_TYPES",
    "SYSTEM_VARIABLE_KEYS",
    "VARIABLE_NODE_ID",
    "WORKFLOW_MAX_DEPTH",
    "WORKFLOW_MAX_RUN_TIMES",
    "AnswerEvent",
    "DispatchResponse",
    "EdgeClassifier",
    "EventSink",
    "FastAnswerEvent",
    "FlowNodeType",
    "HttpClient",
    "InteractiveEvent",
    "InteractiveRecord",
    "NodeContext",
    "NodeHandler",
    "NodeInput",
    "NodeInputKey",
    "NodeOutput",
    "NodeOutputKey",
    "NodeRegistry",
    "NodeResponseEvent",
    "NodeStatusEvent",
    "RuntimeEdge",
    "RuntimeNode",
    "SecretResolver",
    "ServiceUnavailableError",
    "ToolEvent",
    "UpdateVariablesEvent",
    "ValueType",
    "WorkflowDurationEvent",
    "WorkflowEdge",
    "WorkflowEvent",
    "WorkflowGraph",
    "WorkflowGraphError",
    "WorkflowNode",
    "WorkflowRun",
    "WorkflowRunResult",
    "WorkflowServices",
    "decide_run_status",
    "default_registry",
    "error_handle_id",
    "event_name",
    "get_handle_id",
    "get_histories",
    "get_last_interactive_value",
    "get_reference_variable_value",
    "is_pending_interactive",
    "load_workflow",
    "mark_interactive_answered",
    "parse_interactive",
    "register_node",
    "remove_system_variable",
    "replace_editor_variable",
    "replace_variable",
    "resume_workflow",
    "run_workflow",
    "text_adapt_gpt_response",
    "value_type_format",
]
