"""The agent loop's provider-neutral core (spec §3.6–§3.13): what every provider adapts to.

The loop contract, in the order a provider drives it:

1. :func:`start_run` builds the :class:`RunState` (catalog, plan, system prompt, transcript) and applies
   an answered ask or child tool;
2. per model request: :func:`checkpoint_when_full` (history compression), :func:`tool_choice` (the
   flip to ``none``), tools withheld on the last of :func:`request_limit` requests, the response's
   stream through a :class:`StreamHandler`, and :meth:`RunState.bill_model_call` once;
3. the response's tool calls through :func:`run_tool_calls` (or one by one: :func:`run_generic`,
   :func:`run_plan`, :func:`run_ask`), which emit tool events, compress responses, bill and pause;
4. an answer without tool calls goes through :func:`stop_gate_rejects`;
5. :func:`finish_run` turns the state into the :class:`~fathom.agent.types.AgentLoopResult`.

A provider module imports this package and ``fathom.agent``'s shared modules, never another provider
(an import-linter contract holds it).
"""

from fathom.agent.kernel.checkpoint import checkpoint_when_full
from fathom.agent.kernel.lifecycle import (
    INTERACTIVE_NOT_SUPPORTED,
    TOOL_CHOICE_NONE_AFTER,
    finish_run,
    request_limit,
    start_run,
    tool_choice,
)
from fathom.agent.kernel.state import RunState
from fathom.agent.kernel.stop_gate import StopGateConfig, stop_gate_rejects
from fathom.agent.kernel.stream import ModelTurn, StreamHandler
from fathom.agent.kernel.tools import (
    PROVIDER_STATE_VERSION,
    CallOutcome,
    run_ask,
    run_generic,
    run_plan,
    run_tool_calls,
)

__all__ = [
    "INTERACTIVE_NOT_SUPPORTED",
    "PROVIDER_STATE_VERSION",
    "TOOL_CHOICE_NONE_AFTER",
    "CallOutcome",
    "ModelTurn",
    "RunState",
    "StopGateConfig",
    "StreamHandler",
    "checkpoint_when_full",
    "finish_run",
    "request_limit",
    "run_ask",
    "run_generic",
    "run_plan",
    "run_tool_calls",
    "start_run",
    "stop_gate_rejects",
    "tool_choice",
]
