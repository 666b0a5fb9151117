"""Suggested next questions over FastGPT's paths: ``POST /api/core/ai/agent/v2/createQuestionGuide``
(``{appId, chatId, questionGuide?}``: the chat's last 6 items) and the older
``POST /api/core/ai/agent/createQuestionGuide`` (``{messages}``); ``data`` is the list of questions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from fathom.chat import ChatError, draft_workflow
from fathom.chat.question_guide import (
    HISTORY_ITEMS,
    QuestionGuide,
    create_question_guide,
    history_messages,
    question_guide_config,
)
from fathom.llm.errors import ModelRequestError
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.permissions import require_team_key
from fathom.server.routes.app_access import chat_of
from fathom.server.routes.common import ANY_METHOD, platform_of
from fathom.server.routes.history import history_app
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, answers, parsed
from fathom.store.protocols import UsageRecord

router = APIRouter(tags=["chat"])
MESSAGES_MAX = 50
CUSTOM_PROMPT_MAX = 10_000


class GuideSetting(ApiModel):
    open: bool = True
    model: Annotated[str | None, BLANK_IS_NONE] = Field(None, max_length=200)
    customPrompt: Annotated[str | None, BLANK_IS_NONE] = Field(None, max_length=CUSTOM_PROMPT_MAX)


class CreateQuestionGuide(ApiModel):
    appId: ObjectId
    chatId: Annotated[str, Field(min_length=1, max_length=1024)]
    questionGuide: GuideSetting | None = Field(
        None, description="Instead of the app's chatConfig.questionGuide: {open, model?, customPrompt?}"
    )


class GuideMessage(ApiModel):
    role: str = Field(max_length=20)
    content: Annotated[str, Field(max_length=100_000)] = ""


class CreateQuestionGuideLegacy(ApiModel):
    messages: Annotated[list[GuideMessage], Field(min_length=1, max_length=MESSAGES_MAX)]


def _app_model(workflow: dict[str, Any]) -> str:
    """The first chat model the app's nodes name ("" when none)."""
    for node in workflow.get("nodes") or []:
        for item in node.get("inputs") or []:
            if item.get("key") == "model" and isinstance(item.get("value"), str) and item["value"]:
                return str(item["value"])
    return ""


async def _guide(
    request: Request, auth: AuthContext, messages: list[dict[str, str]], model_id: str, custom_prompt: str
) -> QuestionGuide:
    try:
        model = chat_of(request).chat_model(model_id)
    except (LookupError, RuntimeError) as exc:
        raise ApiError(400, "invalidParams", f"questionGuide.model: {exc}") from None
    try:
        guide = await create_question_guide(model, messages, custom_prompt=custom_prompt)
    except ModelRequestError as exc:
        raise ApiError(502, "", f"question guide: the model {model_id or 'default'} failed: {exc}") from None
    return guide


async def _record(request: Request, auth: AuthContext, app_id: str | None, guide: QuestionGuide) -> None:
    await platform_of(request).team_admin.record_usage(
        UsageRecord(
            team_id=auth.team_id,
            app_id=app_id,
            source="api" if auth.api_key_id else "online",
            module_name="Question Guide",
            model=guide.model,
            input_tokens=guide.input_tokens,
            output_tokens=guide.output_tokens,
            total_points=0,
            api_key_id=auth.api_key_id,
        )
    )


@router.api_route(
    "/api/core/ai/agent/v2/createQuestionGuide",
    methods=ANY_METHOD,
    summary="Suggested next questions for a chat",
    responses=answers(list[str], description="``data``: the questions (``[]`` when the model gave none)"),
)
async def create_guide(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: CreateQuestionGuide = parsed(CreateQuestionGuide),
) -> dict[str, Any]:
    """Reads the chat's last 6 items (the caller must be able to read the chat). The model is
    ``questionGuide.model``, else the app's chat model, else the default one; the prompt is FastGPT's, or
    ``customPrompt``. The model's tokens are recorded as the app's usage (module ``Question Guide``)."""
    app, caller = await history_app(request, auth, {"appId": payload.appId})
    chat = chat_of(request)
    try:
        workflow = (await chat.apps.run_graph(auth.team_id, app.id, app=app)).workflow
    except ChatError:
        workflow = draft_workflow(app)
    setting = (
        question_guide_config(payload.questionGuide.model_dump())
        if payload.questionGuide is not None
        else question_guide_config((workflow.get("chatConfig") or {}).get("questionGuide"))
    )
    items, _ = await chat.history.records(
        auth.team_id, app.id, payload.chatId, caller, offset=0, limit=HISTORY_ITEMS
    )
    messages = history_messages(items)
    if not messages:
        return envelope([])
    guide = await _guide(
        request, auth, messages, setting.model or _app_model(workflow), setting.custom_prompt
    )
    await _record(request, auth, app.id, guide)
    return envelope(guide.questions)


@router.api_route(
    "/api/core/ai/agent/createQuestionGuide",
    methods=ANY_METHOD,
    summary="Suggested next questions for messages (FastGPT's older form)",
    responses=answers(list[str]),
)
async def create_guide_legacy(
    request: Request,
    auth: AuthContext = Depends(authenticate),
    payload: CreateQuestionGuideLegacy = parsed(CreateQuestionGuideLegacy),
) -> dict[str, Any]:
    require_team_key(auth, "ask for questions outside a chat of its app")
    messages = [
        {"role": message.role, "content": message.content}
        for message in payload.messages
        if message.role in ("user", "assistant", "system") and message.content
    ]
    guide = await _guide(request, auth, messages, "", "")
    await _record(request, auth, None, guide)
    return envelope(guide.questions)
