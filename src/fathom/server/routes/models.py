"""``/api/core/ai/model/list``: the models this server can run, for the console's model pickers; and
OpenAI's ``GET /v1/models`` (also under ``/api/v1``) for OpenAI clients that list models before chatting.

FastGPT's list carries every configured model with its type (``llm``, ``embedding``, ``rerank``); a
workflow or app naming a model that is not listed runs on the default model of that type
(``getLLMModel``/``getEmbeddingModel``/``getRerankModel``), so each item also says whether it is that
default. The embedded local embedding models are listed as ``provider: "local"``. No endpoint address or
key is ever returned.

``/v1/models`` answers in OpenAI's shape (``{"object": "list", "data": [{id, object, created, owned_by}]}``,
no envelope) with the chat models any key or session that may call ``/api/v1/chat/completions`` may name
there — a key limited to one app included. The default chat model comes first. ``created`` is when this
server loaded its models (they carry no date of their own).
"""

from __future__ import annotations

import time
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from fathom.platform.model_catalog import ListedModel
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import envelope
from fathom.server.permissions import require_team_key
from fathom.server.routes.common import ANY_METHOD, platform_of
from fathom.server.typed import ErrorEnvelope, NoParams, answers, parsed

router = APIRouter(tags=["models"])
_LOADED_AT = int(time.time())


class ModelView(BaseModel):
    """One model; the ``llm`` fields only for chat models, ``maxToken`` only for embedding ones."""

    type: str = Field(examples=["llm", "embedding", "rerank"])
    model: str
    name: str
    provider: str
    isActive: bool
    isDefault: bool = Field(description="What a workflow naming an unlisted model of this type runs on")
    inputPrice: float
    outputPrice: float
    maxContext: int | None = None
    maxResponse: int | None = None
    vision: bool | None = None
    toolChoice: bool | None = None
    reasoning: bool | None = None
    maxToken: int | None = None


def _model_view(model: ListedModel) -> dict[str, Any]:
    view: dict[str, Any] = {
        "type": model.type,
        "model": model.id,
        "name": model.name,
        "provider": model.provider,
        "isActive": True,
        "isDefault": model.is_default,
        "inputPrice": model.input_price,
        "outputPrice": model.output_price,
    }
    if model.type == "llm":
        view |= {
            "maxContext": model.max_context,
            "maxResponse": model.max_response,
            "vision": model.vision,
            "toolChoice": model.function_calling,
            "reasoning": model.reasoning,
        }
    elif model.type == "embedding":
        view["maxToken"] = model.max_context
    return view


@router.api_route(
    "/api/core/ai/model/list",
    methods=ANY_METHOD,
    summary="Models this server can run",
    responses=answers(list[ModelView]),
)
async def list_models(
    request: Request, auth: AuthContext = Depends(authenticate), _: NoParams = parsed(NoParams)
) -> dict[str, Any]:
    """Chat (``llm``), embedding and rerank models; ``isDefault`` marks what an unknown name runs on."""
    require_team_key(auth, "list models")
    return envelope([_model_view(model) for model in platform_of(request).listed_models()])


class OpenAIModel(BaseModel):
    """One chat model as OpenAI's ``GET /v1/models`` lists it."""

    id: str = Field(examples=["qwen2.5"])
    object: Literal["model"] = "model"
    created: int = Field(description="Unix time this server loaded its models")
    owned_by: str = Field(examples=["fathom"])


class OpenAIModelList(BaseModel):
    """OpenAI's model list (no FastGPT envelope)."""

    object: Literal["list"] = "list"
    data: list[OpenAIModel]


_OPENAI_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"model": OpenAIModelList, "description": "OpenAI's model list"},
    401: {"model": ErrorEnvelope, "description": "No or an unknown API key / session"},
}


@router.get(
    "/api/v1/models",
    summary="Chat models, for OpenAI clients (client.models.list())",
    responses=_OPENAI_ANSWERS,
)
@router.get(
    "/v1/models",
    summary="Chat models, for OpenAI clients (same as /api/v1/models)",
    responses=_OPENAI_ANSWERS,
)
async def list_openai_models(
    request: Request, _auth: AuthContext = Depends(authenticate), _: NoParams = parsed(NoParams)
) -> dict[str, Any]:
    """The chat models a caller of ``/api/v1/chat/completions`` may name, the default first."""
    return {
        "object": "list",
        "data": [
            {"id": model_id, "object": "model", "created": _LOADED_AT, "owned_by": "fathom"}
            for model_id in platform_of(request).chat_model_ids()
        ],
    }
