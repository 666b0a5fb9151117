"""Suggested next questions over FastGPT's paths: ``POST /api/core/ai/agent/v2/createQuestionGuide``
(``{appId, chatId, questionGuide?}``: the chat's last 6 items) and the older
``POST /api/core/ai/agent/createQuestionGuide`` (``{messages}``); ``data`` is the list of questions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from fathom.chat.question_guide import QuestionGuideService
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import envelope
from fathom.server.permissions import require_team_key
from fathom.server.routes.app_access import chat_of
from fathom.server.routes.common import ANY_METHOD
from fathom.server.routes.history import history_app
from fathom.server.typed import BLANK_IS_NONE, ApiModel, ObjectId, answers, parsed

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


def _guides(request: Request) -> QuestionGuideService:
    guides = chat_of(request).question_guides
    assert guides is not None  # built with the chat application
    return guides


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
    app, caller = await history_app(request, auth, payload.appId)
    setting = payload.questionGuide.model_dump() if payload.questionGuide is not None else None
    questions = await _guides(request).for_chat(
        app, payload.chatId, caller, setting, api_key_id=auth.api_key_id
    )
    return envelope(questions)


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
    questions = await _guides(request).for_messages(auth.team_id, messages, api_key_id=auth.api_key_id)
    return envelope(questions)
