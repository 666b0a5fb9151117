"""Model registry: the models file (YAML or JSON) plus the ``FATHOM_OPENAI_*`` shortcuts.

``load_model_registry(settings)`` is what ``fathom serve`` and ``fathom doctor`` call. Every error is a
one-line :class:`ModelsFileError` naming the file, the model id and the field.
"""

from __future__ import annotations

__all__ = ["ModelRegistry", "check_model_endpoint", "load_model_registry"]

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError

from fathom.config import Settings
from fathom.llm.errors import ModelNotFoundError, ModelsFileError
from fathom.llm.health import check_model_endpoint
from fathom.llm.model_config import DEFAULT_OPENAI_BASE_URL, ModelConfig, ModelType

SHORTCUT_CHAT_MODEL = "gpt-4o-mini"
SHORTCUT_MAX_CONTEXT = 128000
SHORTCUT_MAX_RESPONSE = 4096
_TOP_LEVEL_KEYS = {"models", "default_chat", "default_embedding", "default_rerank"}


class ModelRegistry:
    """The configured models (``models``, in file order) with the default chat/embedding/rerank choices."""

    def __init__(
        self,
        models: Iterable[ModelConfig] = (),
        *,
        default_chat_id: str | None = None,
        default_embedding_id: str | None = None,
        default_rerank_id: str | None = None,
        source: str = "",
    ) -> None:
        self._by_id: dict[str, ModelConfig] = {model.id: model for model in models}
        self.default_chat_id = default_chat_id
        self.default_embedding_id = default_embedding_id
        self.default_rerank_id = default_rerank_id
        self.source = source

    @property
    def models(self) -> list[ModelConfig]:
        """Every configured model, in file order (shortcut models last)."""
        return list(self._by_id.values())

    @property
    def ids(self) -> list[str]:
        """Every configured model id."""
        return list(self._by_id)

    def __contains__(self, model_id: object) -> bool:
        return model_id in self._by_id

    def __len__(self) -> int:
        return len(self._by_id)

    def add(self, model: ModelConfig) -> None:
        """Add or replace a model."""
        self._by_id[model.id] = model

    def get(self, model_id: str) -> ModelConfig:
        """The model with this id; unknown ids raise an error listing the known ones."""
        try:
            return self._by_id[model_id]
        except KeyError:
            known = ", ".join(sorted(self._by_id)) or "none configured"
            raise ModelNotFoundError(f"unknown model '{model_id}' (known: {known})") from None

    def find(self, model_id: str) -> ModelConfig | None:
        """The model with this id, or None."""
        return self._by_id.get(model_id)

    def of_type(self, model_type: ModelType) -> list[ModelConfig]:
        """Models of one type, in file order."""
        return [model for model in self._by_id.values() if model.type == model_type]

    def _default(self, model_id: str | None, what: str, hint: str) -> ModelConfig:
        if model_id is None:
            raise ModelNotFoundError(f"no {what} model is configured; {hint}")
        return self.get(model_id)

    def default_chat(self) -> ModelConfig:
        """The default chat model, or ModelNotFoundError saying how to configure one."""
        return self._default(
            self.default_chat_id,
            "chat",
            "set FATHOM_OPENAI_BASE_URL and FATHOM_CHAT_MODEL, or list one in FATHOM_MODELS_FILE",
        )

    def vision_chat(self, model_id: str = "") -> ModelConfig:
        """The chat model ``model_id`` names if it takes images (``vision: true``); empty: the first such
        model. ModelNotFoundError (a LookupError) saying what to configure otherwise."""
        if model_id:
            config = self.find(model_id)
            if config is None or config.type != "llm":
                known = ", ".join(m.id for m in self.of_type("llm") if m.vision) or "none configured"
                raise ModelNotFoundError(f"unknown chat model '{model_id}' (vision models: {known})")
            if not config.vision:
                raise ModelNotFoundError(
                    f"model '{model_id}' does not take images; set vision: true on it in the models file "
                    "if it does, or choose a vision model"
                )
            return config
        for config in self.of_type("llm"):
            if config.vision:
                return config
        raise ModelNotFoundError(
            "no chat model takes images; list one with vision: true in FATHOM_MODELS_FILE"
        )

    def default_embedding(self) -> ModelConfig:
        """The default embedding model, or ModelNotFoundError (callers may fall back to a local one)."""
        return self._default(
            self.default_embedding_id, "embedding", "list a model of type 'embedding' in FATHOM_MODELS_FILE"
        )

    def default_rerank(self) -> ModelConfig:
        """The default rerank model, or ModelNotFoundError."""
        return self._default(
            self.default_rerank_id, "rerank", "list a model of type 'rerank' in FATHOM_MODELS_FILE"
        )


def _read_file(path: Path, label: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelsFileError(f"{label}: file not found") from None
    except OSError as exc:
        raise ModelsFileError(f"{label}: cannot read ({exc.strerror or exc})") from None
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ModelsFileError(
                f"{label}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
            ) from None
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ModelsFileError(f"{label}: invalid YAML{where}: {problem}") from None
    raise ModelsFileError(f"{label}: unsupported extension '{path.suffix}' (use .yaml, .yml or .json)")


def _model_error(label: str, ident: str, exc: ValidationError) -> ModelsFileError:
    first = exc.errors()[0]
    loc = ".".join(str(part) for part in first["loc"])
    msg = str(first["msg"]).replace("Value error, ", "")
    where = f" field '{loc}'" if loc else ""
    return ModelsFileError(f"{label}: {ident}{where}: {msg}")


def _parse_model(
    label: str, index: int, raw: object, environ: Mapping[str, str], seen: dict[str, ModelConfig]
) -> ModelConfig:
    if not isinstance(raw, Mapping):
        raise ModelsFileError(f"{label}: model #{index + 1}: expected a mapping, got {type(raw).__name__}")
    raw_id = raw.get("id")
    ident = f"model '{raw_id}'" if isinstance(raw_id, str) and raw_id else f"model #{index + 1}"
    data = dict(raw)
    if data.get("api_key") is not None and data.get("api_key_env") is not None:
        raise ModelsFileError(f"{label}: {ident} field 'api_key_env': give api_key or api_key_env, not both")
    try:
        model = ModelConfig.model_validate(data)
    except ValidationError as exc:
        raise _model_error(label, ident, exc) from None
    if model.id in seen:
        raise ModelsFileError(f"{label}: {ident} field 'id': duplicate model id")
    if model.api_key_env is not None:
        value = environ.get(model.api_key_env)
        if not value:
            raise ModelsFileError(
                f"{label}: {ident} field 'api_key_env': environment variable {model.api_key_env} is not set"
            )
        model = model.model_copy(update={"api_key": SecretStr(value)})
    return model


def _pick_default(
    label: str, doc: Mapping[str, Any], key: str, models: dict[str, ModelConfig], model_type: ModelType
) -> str | None:
    chosen = doc.get(key)
    if chosen is None:
        return next((m.id for m in models.values() if m.type == model_type), None)
    if not isinstance(chosen, str) or chosen not in models:
        known = ", ".join(m.id for m in models.values() if m.type == model_type) or "none"
        raise ModelsFileError(
            f"{label}: field '{key}': unknown model '{chosen}' (known {model_type}: {known})"
        )
    if models[chosen].type != model_type:
        raise ModelsFileError(
            f"{label}: field '{key}': model '{chosen}' has type '{models[chosen].type}', not '{model_type}'"
        )
    return chosen


def _parse_models_document(doc: object, label: str, environ: Mapping[str, str]) -> ModelRegistry:
    """Build a registry from an already-parsed models document (a mapping with ``models: [...]``)."""
    if isinstance(doc, list):
        doc = {"models": doc}
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise ModelsFileError(f"{label}: expected a mapping with a 'models' list, got {type(doc).__name__}")
    unknown = sorted(set(doc) - _TOP_LEVEL_KEYS)
    if unknown:
        raise ModelsFileError(
            f"{label}: field '{unknown[0]}': unknown key (allowed: {', '.join(sorted(_TOP_LEVEL_KEYS))})"
        )
    raw_models = doc.get("models") or []
    if not isinstance(raw_models, list):
        raise ModelsFileError(f"{label}: field 'models': expected a list, got {type(raw_models).__name__}")
    models: dict[str, ModelConfig] = {}
    for index, raw in enumerate(raw_models):
        model = _parse_model(label, index, raw, environ, models)
        models[model.id] = model
    return ModelRegistry(
        models.values(),
        default_chat_id=_pick_default(label, doc, "default_chat", models, "llm"),
        default_embedding_id=_pick_default(label, doc, "default_embedding", models, "embedding"),
        default_rerank_id=_pick_default(label, doc, "default_rerank", models, "rerank"),
        source=label,
    )


def _apply_shortcuts(registry: ModelRegistry, settings: Settings) -> None:
    base_url = settings.openai_base_url
    api_key = settings.openai_api_key
    chat_model = settings.chat_model
    if base_url is None and api_key is None and chat_model is None:
        return
    if chat_model is not None and chat_model in registry:
        # The file already describes this model (endpoint and key included): only choose it.
        kind = registry.get(chat_model).type
        if kind != "llm":
            raise ModelsFileError(f"FATHOM_CHAT_MODEL={chat_model}: model has type '{kind}', not 'llm'")
        registry.default_chat_id = chat_model
        return
    model_id = chat_model or SHORTCUT_CHAT_MODEL
    try:
        model = ModelConfig(
            id=model_id,
            type="llm",
            base_url=(base_url or DEFAULT_OPENAI_BASE_URL).rstrip("/"),
            api_key=api_key,
            max_context=SHORTCUT_MAX_CONTEXT,
            max_response=SHORTCUT_MAX_RESPONSE,
            function_calling=True,
        )
    except ValidationError as exc:
        raise _model_error("FATHOM_CHAT_MODEL", f"model '{model_id}'", exc) from None
    registry.add(model)
    registry.default_chat_id = model_id


def load_model_registry(settings: Settings, environ: Mapping[str, str] | None = None) -> ModelRegistry:
    """Load ``settings.models_file`` (if any), then apply the FATHOM_OPENAI_* / FATHOM_CHAT_MODEL shortcuts.

    ``environ`` is only used to resolve ``api_key_env`` entries (default: the process environment).
    With neither a file nor shortcuts the registry is empty and ``default_chat()`` explains what to set.
    """
    env: Mapping[str, str] = os.environ if environ is None else environ
    if settings.models_file is not None:
        label = f"FATHOM_MODELS_FILE={settings.models_file}"
        registry = _parse_models_document(_read_file(Path(settings.models_file), label), label, env)
    else:
        registry = ModelRegistry(source="environment")
    _apply_shortcuts(registry, settings)
    return registry
