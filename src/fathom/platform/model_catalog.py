"""The models this server can run, as its model lists show them: configured chat, embedding and rerank
models and the embedded local embedding models, each saying whether it is the default of its type."""

from __future__ import annotations

from dataclasses import dataclass

from fathom.datasets import EmbedderResolver
from fathom.llm import ModelRegistry


@dataclass(frozen=True)
class ListedModel:
    """One runnable model; ``max_context`` is an embedding model's most tokens per input."""

    type: str
    id: str
    name: str
    provider: str
    is_default: bool
    input_price: float = 0.0
    output_price: float = 0.0
    max_context: int | None = None
    max_response: int = 0
    vision: bool = False
    function_calling: bool = False
    reasoning: bool = False


def listed_models(models: ModelRegistry | None, embedders: EmbedderResolver) -> list[ListedModel]:
    """Every configured model (in the configuration's order), then the local embedding models."""
    items: list[ListedModel] = []
    if models is not None:
        defaults = {
            "llm": models.default_chat_id,
            "embedding": embedders.default_model_id,
            "rerank": models.default_rerank_id,
        }
        items = [
            ListedModel(
                type=model.type,
                id=model.id,
                name=model.display_name,
                provider=model.provider,
                is_default=model.id == defaults[model.type],
                input_price=model.input_price,
                output_price=model.output_price,
                max_context=model.max_context,
                max_response=model.max_response,
                vision=model.vision,
                function_calling=model.function_calling,
                reasoning=model.reasoning,
            )
            for model in models.models
        ]
    for model_id in embedders.local_model_ids():
        items.append(
            ListedModel(
                type="embedding",
                id=model_id,
                name=model_id.removeprefix("local/"),
                provider="local",
                is_default=model_id == embedders.default_model_id,
                max_context=embedders.index_budget(model_id)[0],
            )
        )
    return items


def chat_model_ids(models: ModelRegistry | None) -> list[str]:
    """The chat models' ids, the default first."""
    if models is None:
        return []
    default = models.default_chat_id
    return [model.id for model in sorted(models.of_type("llm"), key=lambda model: model.id != default)]
