"""How an import asks to be trained, checked before anything is stored: model-made training (``qa``,
auto indexes) needs a chat model (the knowledge base's ``agentModel``), image indexes and image collections
a vision model (``vlmModel``). A refusal names the field that asked and the fix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from fathom.datasets.errors import InvalidDatasetRequest
from fathom.datasets.model_training import ChatModels
from fathom.store.protocols import DatasetRecord

VLM_FIX = (
    "set the knowledge base's vlmModel (core/dataset/create or core/dataset/update) to a chat model "
    "with vision: true in the models file"
)


class TrainingChoice(Protocol):
    """What an import request says about its training (the route's request model)."""

    @property
    def trainingType(self) -> str | None: ...
    @property
    def imageIndex(self) -> bool | None: ...

    def training(self) -> tuple[str, dict[str, Any]]: ...


class TrainingChecks:
    """``chat_models`` resolves a chat model id ("" the default), ``vision_model`` a vision model id
    ("" the first configured); both raise LookupError (or RuntimeError) saying what to configure."""

    def __init__(self, chat_models: ChatModels, vision_model: Callable[[str], str]) -> None:
        self.chat_models = chat_models
        self.vision_model = vision_model

    def require_training_model(self, dataset: DatasetRecord, what: str) -> None:
        """Refuse model-made training (``what`` names the field that asks for it) when no chat model can
        run it: the dataset's ``agentModel``, or the default chat model when that is not configured."""
        try:
            self.chat_models(dataset.agent_model)
        except (LookupError, RuntimeError) as exc:
            raise InvalidDatasetRequest(
                f"{what}: training with a model needs a chat model (the knowledge base's agentModel): {exc}"
            ) from None

    def _require_vision_model(self, dataset: DatasetRecord, what: str) -> None:
        """Refuse describing images (``what`` names the field that asks for it) when no vision model can:
        the dataset's ``vlmModel``, or the first model with ``vision: true`` when it has none."""
        try:
            self.vision_model(dataset.vlm_model)
        except LookupError as exc:
            raise InvalidDatasetRequest(
                f"{what}: describing images needs a vision model (the knowledge base's vlmModel): {exc}; "
                + VLM_FIX
            ) from None

    def collection_training(
        self, dataset: DatasetRecord, payload: TrainingChoice
    ) -> tuple[str, dict[str, Any]]:
        """The collection's training type and training settings, after checking they can run."""
        training_type, extra = payload.training()
        if training_type == "qa":
            self.require_training_model(dataset, 'trainingType "qa"')
        elif extra.get("autoIndexes"):
            self.require_training_model(
                dataset, 'trainingType "auto"' if payload.trainingType == "auto" else "autoIndexes"
            )
        if payload.imageIndex:
            if training_type == "qa" or extra.get("autoIndexes"):
                raise InvalidDatasetRequest(
                    "imageIndex: image indexes go with chunk training only (not with qa or autoIndexes); "
                    "send trainingType chunk without autoIndexes, or leave imageIndex out"
                )
            self._require_vision_model(dataset, "imageIndex")
            extra["imageIndex"] = True
        return training_type, extra

    def image_training(self, dataset: DatasetRecord, payload: TrainingChoice) -> tuple[str, dict[str, Any]]:
        """An image file's import: an image collection, described by the vision model (FastGPT's
        ``imageParse``); the chunk settings and training type of a document import do not apply."""
        if payload.trainingType in ("qa", "auto") or payload.training()[1]:
            raise InvalidDatasetRequest(
                "trainingType: an image file is described by the vision model (an image collection); "
                "leave trainingType, autoIndexes and imageIndex out for image files"
            )
        self._require_vision_model(dataset, "file")
        return "imageParse", {}
