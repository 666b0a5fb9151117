"""How a collection import asks to be trained, checked before anything is stored: model-made training
needs a chat model (``agentModel``), image indexes and image collections a vision model (``vlmModel``)."""

from __future__ import annotations

from typing import Any, Protocol

from fastapi import Request

from fathom.server.errors import ApiError
from fathom.server.routes.common import platform_of
from fathom.store.protocols import DatasetRecord

VLM_FIX = (
    "set the knowledge base's vlmModel (core/dataset/create or core/dataset/update) to a chat model "
    "with vision: true in the models file"
)


class TrainingChoice(Protocol):
    @property
    def trainingType(self) -> str | None: ...
    @property
    def imageIndex(self) -> bool | None: ...

    def training(self) -> tuple[str, dict[str, Any]]: ...


def check_training_model(request: Request, dataset: DatasetRecord, what: str) -> None:
    """Refuse model-made training (``what`` names the field that asks for it) when no chat model can
    run it: the dataset's ``agentModel``, or the default chat model when that is not configured here."""
    try:
        platform_of(request).chat.chat_model(dataset.agent_model)
    except (LookupError, RuntimeError) as exc:
        raise ApiError(
            400,
            "invalidParams",
            f"{what}: training with a model needs a chat model (the knowledge base's agentModel): {exc}",
        ) from None


def _check_vision_model(request: Request, dataset: DatasetRecord, what: str) -> None:
    """Refuse describing images (``what`` names the field that asks for it) when no vision model can:
    the dataset's ``vlmModel``, or the first model with ``vision: true`` when it has none."""
    try:
        platform_of(request).vision_model_id(dataset.vlm_model)
    except LookupError as exc:
        raise ApiError(
            400,
            "invalidParams",
            f"{what}: describing images needs a vision model (the knowledge base's vlmModel): {exc}; "
            + VLM_FIX,
        ) from None


def collection_training(
    request: Request, dataset: DatasetRecord, payload: TrainingChoice
) -> tuple[str, dict[str, Any]]:
    """The collection's training type and training settings, after checking they can run."""
    training_type, extra = payload.training()
    if training_type == "qa":
        check_training_model(request, dataset, 'trainingType "qa"')
    elif extra.get("autoIndexes"):
        check_training_model(
            request, dataset, 'trainingType "auto"' if payload.trainingType == "auto" else "autoIndexes"
        )
    if payload.imageIndex:
        if training_type == "qa" or extra.get("autoIndexes"):
            raise ApiError(
                400,
                "invalidParams",
                "imageIndex: image indexes go with chunk training only (not with qa or autoIndexes); "
                "send trainingType chunk without autoIndexes, or leave imageIndex out",
            )
        _check_vision_model(request, dataset, "imageIndex")
        extra["imageIndex"] = True
    return training_type, extra


def check_image_training(
    request: Request, dataset: DatasetRecord, payload: TrainingChoice
) -> tuple[str, dict[str, Any]]:
    """An image file's import: an image collection, described by the vision model (FastGPT's
    ``imageParse``); the chunk settings and training type of a document import do not apply."""
    if payload.trainingType in ("qa", "auto") or payload.training()[1]:
        raise ApiError(
            400,
            "invalidParams",
            "trainingType: an image file is described by the vision model (an image collection); "
            "leave trainingType, autoIndexes and imageIndex out for image files",
        )
    _check_vision_model(request, dataset, "file")
    return "imageParse", {}
