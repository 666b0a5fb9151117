"""The workflow adapter of the agent loop kernel (spec §3.1 ``agentLoopCore``, §3.5 consumer matrix).

:class:`AgentEventAdapter` receives kernel events and owns the node's single ``assistantResponses``
array; it forwards SSE-ready workflow events (``answer`` deltas, ``toolCall`` / ``toolParams`` /
``toolResponse``, ``planStatus`` / ``plan``), collects the node-response details (LLM requests, tool
runs, compressions) and the pushed usages. A history checkpoint becomes the hidden
``contextCheckpoint`` value of this turn (the next turn restores from it). :func:`ask_interactive`
turns a kernel ask pause into the workflow interactive ``agentAsk``; :func:`usage_to_bill` turns a
kernel usage into a bill line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fathom.agent import (
    AfterMessageCompress,
    AgentLoopUsage,
    AnswerDeltaEvent,
    AskPause,
    AskStart,
    LLMRequestEnd,
    LLMRequestStart,
    PlanOperation,
    PlanStatus,
    ReasoningDeltaEvent,
    StopGateEvent,
    ToolCallEvent,
    ToolParamsEvent,
    ToolRunEnd,
)
from fathom.workflow.dispatch import NodeContext
from fathom.workflow.events import AnswerEvent, ToolEvent
from fathom.workflow.nodes.agent_context import CHECKPOINT_VALUE, checkpoint_value


@dataclass
class ToolDisplay:
    """How a tool shows in cards: its display name and avatar (the function name is the id)."""

    name: str
    avatar: str = ""


def usage_to_bill(usage: AgentLoopUsage | dict[str, Any]) -> dict[str, Any]:
    """A kernel usage record as a workflow bill line (``nodeDispatchUsages`` item)."""
    wire = usage if isinstance(usage, dict) else usage.to_wire()
    line = {
        "moduleName": wire.get("moduleName", ""),
        "totalPoints": wire.get("totalPoints", 0),
        "model": wire.get("modelId") or wire.get("model"),
        "inputTokens": wire.get("inputTokens"),
        "outputTokens": wire.get("outputTokens"),
    }
    return {k: v for k, v in line.items() if v is not None}


def ask_interactive(pause: AskPause, agent_state: dict[str, Any]) -> dict[str, Any]:
    """The workflow interactive of an ask pause: ``agentAsk{askId, params{description, questions}}``;
    ``params.agentState`` carries what the resume needs (transcript, provider state, plan)."""
    return {
        "type": "agentAsk",
        "askId": pause.ask_id,
        "params": {
            "description": pause.ask.get("reason", ""),
            "questions": [{**q, "answer": ""} for q in pause.ask.get("questions") or []],
            "agentState": agent_state,
        },
    }


@dataclass
class AgentEventAdapter:
    """Kernel events → assistant responses, node-response details and workflow SSE events."""

    ctx: NodeContext
    tools: dict[str, ToolDisplay] = field(default_factory=dict)
    stream: bool = True
    assistant_responses: list[dict[str, Any]] = field(default_factory=list)
    llm_details: list[dict[str, Any]] = field(default_factory=list)
    tool_details: list[dict[str, Any]] = field(default_factory=list)
    compress_details: list[dict[str, Any]] = field(default_factory=list)
    plan_details: list[dict[str, Any]] = field(default_factory=list)
    usages: list[AgentLoopUsage] = field(default_factory=list)
    _tool_entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    _seen_requests: set[str] = field(default_factory=set)
    _request_text: str = ""

    # ---------------------------------------------------------------- callbacks for the runtime
    def usage_push(self, usages: list[AgentLoopUsage]) -> None:
        """``runtime.usage_push``: keep each pushed usage once (the node bills them)."""
        self.usages.extend(usages)

    def emit_event(self, event: Any) -> None:
        """``runtime.emit_event``: dispatch one kernel event."""
        handler = getattr(self, f"_on_{getattr(event, 'type', '')}", None)
        if handler is not None:
            handler(event)

    # ---------------------------------------------------------------- assistant responses
    def _append_text(self, kind: str, text: str) -> None:
        last = self.assistant_responses[-1] if self.assistant_responses else None
        if last is not None and last.get("type") == kind:
            last[kind]["content"] += text
        else:
            self.assistant_responses.append({"type": kind, kind: {"content": text}})

    def _tool_card(self, call: dict[str, Any]) -> dict[str, Any]:
        function = call.get("function") or {}
        name = str(function.get("name") or call.get("name") or "")
        display = self.tools.get(name, ToolDisplay(name=name))
        return {
            "id": str(call.get("id") or ""),
            "toolName": display.name,
            "toolAvatar": display.avatar,
            "functionName": name,
            "params": str(function.get("arguments") or ""),
            "response": "",
        }

    # ---------------------------------------------------------------- kernel events
    def _on_llm_request_start(self, event: LLMRequestStart) -> None:
        self._request_text = ""

    def _on_answer_delta(self, event: AnswerDeltaEvent) -> None:
        self._request_text += event.text
        self._append_text("text", event.text)
        if self.stream:
            self.ctx.emit(AnswerEvent(text=event.text, node_id=self.ctx.node_id))

    def _on_reasoning_delta(self, event: ReasoningDeltaEvent) -> None:
        self._append_text("reasoning", event.text)
        if self.stream:
            self.ctx.emit(AnswerEvent(text="", reasoning=event.text, node_id=self.ctx.node_id))

    def _on_llm_request_end(self, event: LLMRequestEnd) -> None:
        if event.request_id in self._seen_requests:
            return
        self._seen_requests.add(event.request_id)
        answer = event.answer_text or ""
        if answer and not self._request_text and answer.strip():
            self._append_text("text", answer)  # a non-streamed tail
        self.llm_details.append(
            {
                "requestId": event.request_id,
                "model": event.model_name,
                "finishReason": event.finish_reason,
                "seconds": event.seconds,
                "usages": [usage_to_bill(u) for u in event.usages or []],
                **({"error": event.error} if event.error else {}),
            }
        )

    def _on_tool_call(self, event: ToolCallEvent) -> None:
        card = self._tool_card(event.call)
        self._tool_entries[card["id"]] = card
        self.assistant_responses.append({"type": "tool", "tools": [card]})
        self.ctx.emit(ToolEvent(kind="toolCall", data={"tool": dict(card)}))

    def _on_tool_params(self, event: ToolParamsEvent) -> None:
        card = self._tool_entries.get(event.call_id)
        if card is not None:
            card["params"] += event.args_delta
        self.ctx.emit(
            ToolEvent(
                kind="toolParams",
                data={
                    "tool": {
                        "id": event.call_id,
                        "toolName": "",
                        "toolAvatar": "",
                        "params": event.args_delta,
                        "response": "",
                    }
                },
            )
        )

    def _on_tool_run_end(self, event: ToolRunEnd) -> None:
        call_id = str(event.call.get("id") or "")
        card = self._tool_entries.get(call_id)
        if card is None:
            card = self._tool_card(event.call)
            self._tool_entries[call_id] = card
            self.assistant_responses.append({"type": "tool", "tools": [card]})
        card["response"] = event.response
        function = event.call.get("function") or {}
        if function.get("arguments"):
            card["params"] = str(function["arguments"])
        self.ctx.emit(ToolEvent(kind="toolResponse", data={"tool": dict(card)}))
        self.tool_details.append(
            {
                "id": call_id,
                "toolName": card["toolName"],
                "functionName": card["functionName"],
                "params": card["params"],
                "response": event.response,
                "seconds": event.seconds,
                **({"errorMessage": event.error_message} if event.error_message else {}),
            }
        )

    def _on_after_message_compress(self, event: AfterMessageCompress) -> None:
        self.compress_details.append(
            {
                "requestIds": event.request_ids,
                "seconds": event.seconds,
                "usages": [usage_to_bill(u) for u in event.usages or []],
            }
        )
        content = event.context_checkpoint
        if content and not any(v.get(CHECKPOINT_VALUE) == content for v in self.assistant_responses):
            self.assistant_responses.append(checkpoint_value(content))  # hidden; restored next turn

    def _on_plan_status(self, event: PlanStatus) -> None:
        self.ctx.emit(ToolEvent(kind="planStatus", data={"status": event.status}))

    def _on_plan_operation(self, event: PlanOperation) -> None:
        self.plan_details.append(
            {"operation": event.operation, "message": event.message, "success": event.success}
        )
        if not event.success or event.plan is None:
            return
        plan = event.plan
        plan_id = plan.get("planId")
        self.assistant_responses[:] = [
            item
            for item in self.assistant_responses
            if not (
                item.get("type") == "agentPlan" and (item.get("agentPlan") or {}).get("planId") == plan_id
            )
        ]
        self.assistant_responses.append({"type": "agentPlan", "agentPlan": plan})
        self.ctx.emit(ToolEvent(kind="plan", data={"plan": plan}))

    def _on_ask_start(self, event: AskStart) -> None:
        self.assistant_responses.append({"type": "agentAsk", "agentAsk": {**event.ask, "askId": event.id}})

    def _on_stop_gate(self, event: StopGateEvent) -> None:
        self.assistant_responses.append(
            {"type": "agentStopGate", "agentStopGate": {"feedback": event.feedback}, "hidden": True}
        )
