"""What a chat run needs before it starts (:class:`ChatRequest` → :class:`PreparedRun`) and what it
leaves behind (:class:`ChatOutcome`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fathom.chat.apps import AppGraph
from fathom.chat.run_files import RunFiles
from fathom.store.protocols import AppRecord
from fathom.workflow import WorkflowRunResult


@dataclass
class ChatRequest:
    """One chat completion request, already authenticated (ids are the caller's team and app)."""

    team_id: str
    member_id: str
    app_id: str
    messages: Any = None
    chat_id: str | None = None
    stream: bool = False
    detail: bool = False
    variables: dict[str, Any] | None = None
    response_chat_item_id: str | None = None
    metadata: dict[str, Any] | None = None
    custom_uid: str | None = None
    api_key_id: str | None = None
    source: str = "api"
    draft: bool = False
    workflow: dict[str, Any] | None = None
    api_version: int = 1
    app: AppRecord | None = None  # the app as the route already loaded it for the permission check
    app_owner: str | None = None  # with ``app``: the member who created it, read with it
    share_link_id: str | None = None  # a share link's visitor: the link (its points grow) ...
    share_id: str | None = None  # ... its shareId and the visitor's uid, stored on a new chat
    out_link_uid: str | None = None


@dataclass
class PreparedRun:
    """The run about to start: graph, query, histories, variables, and where its items go."""

    request: ChatRequest
    graph: AppGraph
    chat_id: str
    chat_id_given: bool
    response_chat_item_id: str
    query: list[dict[str, Any]]
    histories: list[dict[str, Any]]
    variables: dict[str, Any]
    chat_exists: bool
    resume_item: dict[str, Any] | None = None  # the stored AI item a pending interactive lives in
    resume_answer: Any = None
    detail: bool = False
    files: RunFiles | None = None  # the run's query/histories after the entry's file checks
    begun: bool = False  # the question and a running answer were stored as the run started
    begun_variables: dict[str, Any] | None = None  # ... with these chat variables


@dataclass
class ChatOutcome:
    """The end of a run: the workflow result (None when it crashed) and the streamed text."""

    prepared: PreparedRun
    result: WorkflowRunResult | None
    text: str = ""
    error: str | None = None
    assistant_value: list[dict[str, Any]] = field(default_factory=list)
    question_guide: list[str] | None = None  # chatConfig.questionGuide on and the model answered

    @property
    def interactive(self) -> dict[str, Any] | None:
        return self.result.interactive if self.result is not None else None
