"""Request and answer models of the chat routes (:mod:`fathom.server.routes.chat`), and FastGPT's SSE
events as schemas (the ``text/event-stream`` answer of the completions operations).

The chat body is validated once per request by a prebuilt pydantic model; messages are ``TypedDict``s,
so they stay the plain dicts the chat service reads (no per-request model building or dumping)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, RootModel, StringConstraints, with_config
from pydantic.json_schema import models_json_schema
from typing_extensions import TypedDict

from fathom.chat import ChatError
from fathom.chat.chat_service import MAX_CHAT_ID_LENGTH
from fathom.chat.errors import MESSAGES_NOT_ARRAY
from fathom.server.pagination import Count
from fathom.server.typed import ApiModel, Flag, OptionalObjectId, Token, answers

MAX_ITEM_ID_LENGTH = 64  # the stored dataId column
_OPEN = ConfigDict(extra="allow")


def _number_as_text(value: Any) -> Any:
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def _blank_as_none(value: Any) -> Any:
    return None if value == "" else value


def _messages_array(value: Any) -> Any:
    """FastGPT's own refusal (its generic error) for ``messages`` that is not a list."""
    if value is not None and not isinstance(value, list):
        raise ChatError(MESSAGES_NOT_ARRAY)  # not a ValueError: pydantic lets it through to the route
    return value


ChatId = Annotated[str, StringConstraints(max_length=MAX_CHAT_ID_LENGTH), BeforeValidator(_number_as_text)]
RequiredChatId = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_CHAT_ID_LENGTH), BeforeValidator(_number_as_text)
]
ItemId = Annotated[str, StringConstraints(max_length=MAX_ITEM_ID_LENGTH), BeforeValidator(_number_as_text)]
Object = Annotated[dict[str, Any] | None, BeforeValidator(_blank_as_none)]


@with_config(_OPEN)
class ImageUrl(TypedDict, total=False):
    url: str
    detail: str


@with_config(_OPEN)
class ContentPart(TypedDict, total=False):
    """``{type: "text", text}``, ``{type: "image_url", image_url: {url}}`` or ``{type: "file_url", name,
    url}`` (a stored chat file also has its ``key``)."""

    type: str
    text: str
    image_url: ImageUrl
    name: str
    url: str
    key: str


@with_config(_OPEN)
class ChatMessage(TypedDict, total=False):
    """An OpenAI chat message; ``system``/``developer``, ``user`` and ``assistant`` ones become chat items."""

    role: str
    content: str | list[ContentPart | str] | None
    name: str
    dataId: NotRequired[str]
    tool_calls: list[dict[str, Any]]
    tool_call_id: str


class ChatCompletionBody(ApiModel):
    """FastGPT's completions body (both versions). OpenAI's own fields (``model``, ``temperature`` ...)
    are accepted and ignored: the app decides them."""

    messages: Annotated[list[ChatMessage] | None, BeforeValidator(_messages_array)] = Field(
        None, description="Required and non-empty, except for plugin apps"
    )
    chatId: ChatId | None = Field(None, description="Continue this chat (its history is loaded)")
    appId: OptionalObjectId = Field(None, description="Needed with a team key or a session")
    stream: Flag = Field(None, description="SSE when true (default false; the chat test: true)")
    detail: Flag = Field(None, description="Node-level events and responseData")
    variables: Object = Field(None, description="Workflow variables (plugin inputs, for plugins)")
    responseChatItemId: ItemId | None = Field(None, description="The id the answer is stored under")
    metadata: Object = None
    customUid: Token | None = Field(None, description="The chat's user id in logs")
    retainDatasetCite: Flag = Field(None, description="Keep [id](CITE) markers in the answer")
    lastEventId: Count = Field(None, description="Resume a running chat's stream after this frame")
    nodes: list[dict[str, Any]] | None = Field(None, description="chatTest: the unsaved graph to run")
    edges: list[dict[str, Any]] | None = None
    chatConfig: dict[str, Any] | None = None


class ChatRef(ApiModel):
    appId: OptionalObjectId = Field(None, description="Needed with a team key or a session")
    chatId: ChatId | None = Field(None, description="The chat (required)")


class ResumeChat(ChatRef):
    detail: Flag = Field(None, description="Default true")
    version: Count = Field(None, ge=1, le=2, description="The stream's API version, 1 or 2 (default 2)")
    lastEventId: Count = Field(None, description="The last frame the client has (or Last-Event-ID)")


class Stopped(BaseModel):
    success: bool


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(BaseModel):
    role: str
    content: str | list[dict[str, Any]] = Field(description="Text, or with detail the answer's items")


class Choice(BaseModel):
    message: AssistantMessage
    finish_reason: str | None
    index: int


class IndexingDataset(BaseModel):
    """A knowledge base still indexing: ``pending`` of its ``total`` collections not yet searchable."""

    datasetId: str
    name: str
    pending: int
    total: int


class ChatCompletion(BaseModel):
    """The non-stream answer (not in FastGPT's envelope)."""

    id: str = Field(description="v1: the chat id (new when none was sent); v2: the one sent, or empty")
    model: str
    usage: Usage
    choices: list[Choice]
    error: Any = None
    responseData: list[dict[str, Any]] | None = Field(None, description="detail only: node responses")
    newVariables: dict[str, Any] | None = Field(None, description="detail only")
    datasetIndexing: list[IndexingDataset] | None = Field(
        None,
        description="detail only, Fathom's: the searched knowledge bases still indexing (the answer may "
        "miss passages of documents not yet searchable); absent when every one is fully indexed",
    )
    interactive: dict[str, Any] | None = Field(None, description="The run paused for the user")
    questionGuide: list[str] | None = Field(
        None,
        description="Fathom's: suggested next questions, only when the app's chatConfig.questionGuide is on "
        "(absent when off, or when the model failed on them)",
    )


# --- SSE events: each frame's ``data``; ``x-sse-event`` names the ``event:`` line --------------------


def _event(*names: str) -> ConfigDict:
    return ConfigDict(extra="allow", json_schema_extra={"x-sse-event": list(names)})


class ChunkDelta(BaseModel):
    role: str | None = None
    content: str | None = None
    reasoning_content: str | None = None


class ChunkChoice(BaseModel):
    delta: ChunkDelta
    index: int
    finish_reason: str | None


class SseAnswer(BaseModel):
    """``answer`` / ``fastAnswer``: an OpenAI chat-completion chunk (the last one has finish_reason)."""

    model_config = _event("answer", "fastAnswer")
    id: str
    object: str
    created: int
    model: str
    choices: list[ChunkChoice]


class SseDone(RootModel[Literal["[DONE]"]]):
    """``answer``: the end of the answer (FastGPT v1 still sends ``flowResponses`` after it)."""

    model_config = ConfigDict(json_schema_extra={"x-sse-event": ["answer"]})


class SseFlowNodeStatus(BaseModel):
    """``flowNodeStatus``: a node started."""

    model_config = _event("flowNodeStatus")
    status: str = Field(examples=["running"])
    name: str


class NodeResponse(BaseModel):
    """One node's response data (FastGPT's ``responseData`` item; more fields per node kind)."""

    model_config = ConfigDict(extra="allow")
    nodeId: str | None = None
    moduleName: str | None = None
    moduleType: str | None = None
    runningTime: float | None = None
    totalPoints: float | None = None


class SseFlowNodeResponse(NodeResponse):
    """``flowNodeResponse`` (v2): a root-level node finished."""

    model_config = _event("flowNodeResponse")


class SseFlowResponses(RootModel[list[NodeResponse]]):
    """``flowResponses`` (v1): every node's response, after ``[DONE]``."""

    model_config = ConfigDict(json_schema_extra={"x-sse-event": ["flowResponses"]})


class ToolCard(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    toolName: str
    toolAvatar: str | None = None
    functionName: str | None = None
    params: str
    response: str


class SseTool(BaseModel):
    """``toolCall`` (a tool was chosen), ``toolParams`` (a delta of its arguments), ``toolResponse``."""

    model_config = _event("toolCall", "toolParams", "toolResponse")
    tool: ToolCard


class SseUpdateVariables(RootModel[dict[str, Any]]):
    """``updateVariables``: the workflow's variables after a change (system variables left out)."""

    model_config = ConfigDict(json_schema_extra={"x-sse-event": ["updateVariables"]})


class Interactive(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = Field(examples=["userSelect", "userInput"])
    params: dict[str, Any] = Field(description="userSelectOptions, or inputForm")


class SseInteractive(BaseModel):
    """``interactive``: the run paused for the user's choice or form."""

    model_config = _event("interactive")
    interactive: Interactive


class SseDatasetIndexing(BaseModel):
    """``datasetIndexing`` (Fathom's, detail only): a knowledge-base search node read knowledge bases still
    indexing, so the answer may miss passages; sent once per such node, before its ``flowNodeResponse``."""

    model_config = _event("datasetIndexing")
    nodeId: str
    datasets: list[IndexingDataset]
    message: str = Field(examples=["The knowledge base is still indexing: …. This answer may miss passages."])


class SseQuestionGuide(RootModel[list[str]]):
    """``questionGuide`` (Fathom's, detail only): the suggested next questions when the app's
    ``chatConfig.questionGuide`` is on, after the answer and before ``[DONE]``."""

    model_config = ConfigDict(json_schema_extra={"x-sse-event": ["questionGuide"]})


class SseWorkflowDuration(BaseModel):
    """``workflowDuration``: the run ended."""

    model_config = _event("workflowDuration")
    durationSeconds: float


class SseError(BaseModel):
    """``error`` (also without detail): ``{message}``, or FastGPT's error envelope. The stream ends."""

    model_config = _event("error")
    message: str
    code: int | None = None
    statusText: str | None = None


class SseResume(BaseModel):
    """Fathom's resumption frames: ``resumePhase`` {phase, lastEventId?}, ``resumeCompleted``
    {lastEventId}, ``resumeUnavailable`` {reason, chatId}."""

    model_config = _event("resumePhase", "resumeCompleted", "resumeUnavailable")
    phase: Literal["catchup", "live"] | None = None
    lastEventId: int | None = None
    reason: str | None = None
    chatId: str | None = None


SSE_EVENTS: list[type[BaseModel]] = [
    SseAnswer,
    SseDone,
    SseFlowNodeStatus,
    SseFlowNodeResponse,
    SseFlowResponses,
    SseTool,
    SseUpdateVariables,
    SseInteractive,
    SseDatasetIndexing,
    SseQuestionGuide,
    SseWorkflowDuration,
    SseError,
    SseResume,
]


def _event_names(event: type[BaseModel]) -> list[str]:
    extra = event.model_config.get("json_schema_extra")
    names = extra.get("x-sse-event") if isinstance(extra, dict) else None
    return [str(name) for name in names] if isinstance(names, list) else []


def _event_stream_schema(events: list[type[BaseModel]]) -> dict[str, Any]:
    """One SSE frame: its ``event:`` name, ``id:`` and ``data:`` text, whose JSON is one of the event
    models (``x-sse-payload``: ``data`` is text to a client, and ``[DONE]`` is not JSON; the models'
    ``$defs`` go to the components)."""
    refs, defs = models_json_schema(
        [(event, "serialization") for event in events], ref_template="#/components/schemas/{model}"
    )
    names = sorted({name for event in events for name in _event_names(event)})
    return {
        "type": "object",
        "description": "One frame: `event:` (with detail=true, and always for error), `id:` (Fathom's frame "
        "number, for Last-Event-ID), `data:` (JSON, or [DONE]); x-sse-payload is the data's JSON",
        "properties": {
            "event": {"type": "string", "examples": names},
            "id": {"type": "string", "examples": ["3"]},
            "data": {"type": "string", "examples": ["[DONE]"]},
        },
        "required": ["data"],
        "x-sse-payload": {"anyOf": [refs[(event, "serialization")] for event in events]},
        "$defs": defs.get("$defs", {}),
    }


def chat_answers(*, stream_only: bool = False) -> dict[int | str, dict[str, Any]]:
    """The completions operations' answers: the JSON completion (or envelope error), and the SSE frames."""
    responses = answers(None)
    ok = responses[200]
    if stream_only:
        ok.pop("model")
        ok["content"] = {}
    else:
        ok["model"] = ChatCompletion
    ok["description"] = "The completion; with stream=true, SSE frames (`event:` name, `data:` one of these)"
    ok.setdefault("content", {})["text/event-stream"] = {"schema": _event_stream_schema(SSE_EVENTS)}
    return responses
