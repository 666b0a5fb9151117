"""``/api/core/ai/model/list``: the models this server can run, for the console's model pickers.

FastGPT's list carries every configured model with its type (``llm``, ``embedding``, ``rerank``); a
workflow or app naming a model that is not listed runs on the default model of that type
(``getLLMModel``/``getEmbeddingModel``/``getRerankModel``), so each item also says whether it is that
default. The embedded local embedding models are listed as ``provider: "local"``. No endpoint address or
key is ever returned.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from fathom.llm import ModelConfig
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import envelope
from fathom.server.permissions import require_team_key
from fathom.server.routes.common import ANY_METHOD, platform_of
from fathom.server.typed import NoParams, answers, parsed

router = APIRouter(tags=["models"])


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


def _model_view(model: ModelConfig, default_id: str | None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "type": model.type,
        "model": model.id,
        "name": model.display_name,
        "provider": model.provider,
        "isActive": True,
        "isDefault": model.id == default_id,
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
    platform = platform_of(request)
    registry = platform.models
    items: list[dict[str, Any]] = []
    if registry is not None:
        defaults = {
            "llm": registry.default_chat_id,
            "embedding": platform.embedders.default_model_id,
            "rerank": registry.default_rerank_id,
        }
        items = [_model_view(model, defaults[model.type]) for model in registry.models]
    default_embedding = platform.embedders.default_model_id
    for model_id in platform.embedders.local_model_ids():
        items.append(
            {
                "type": "embedding",
                "model": model_id,
                "name": model_id.removeprefix("local/"),
                "provider": "local",
                "isActive": True,
                "isDefault": model_id == default_embedding,
                "inputPrice": 0.0,
                "outputPrice": 0.0,
                "maxToken": platform.embedders.index_budget(model_id)[0],
            }
        )
    return envelope(items)
