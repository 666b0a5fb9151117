"""Models file loading, validation messages and the FATHOM_OPENAI_* shortcuts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fathom.config import ConfigError, Settings
from fathom.llm import ModelNotFoundError, ModelRegistry, ModelsFileError, load_model_registry

GOOD_YAML = """
default_chat: qwen
default_embedding: bge
models:
  - id: gpt-4o
    type: llm
    base_url: https://api.openai.com/v1
    api_key_env: TEST_OPENAI_KEY
    max_context: 128000
    max_response: 16000
    function_calling: true
    vision: true
    input_price: 2.5
    output_price: 10
  - id: qwen
    base_url: http://127.0.0.1:8000/v1
    max_context: 32000
    max_response: 8000
    function_calling: false
  - id: bge
    type: embedding
    base_url: http://127.0.0.1:8001/v1
    api_key: sk-local
    dimensions: 1024
    batch_size: 16
  - id: jina-rerank
    type: rerank
    base_url: http://127.0.0.1:8002/v1
"""


def settings_for(tmp_path: Path, name: str, text: str, **extra: object) -> Settings:
    path = tmp_path / name
    path.write_text(text)
    return Settings(models_file=path, **extra)  # type: ignore[arg-type]


def test_models_file_loads_models_defaults_and_env_key(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "models.yaml", GOOD_YAML)
    registry = load_model_registry(settings, environ={"TEST_OPENAI_KEY": "sk-from-env"})
    assert [m.id for m in registry.models] == ["gpt-4o", "qwen", "bge", "jina-rerank"]
    assert registry.get("gpt-4o").api_key_value() == "sk-from-env"
    assert registry.get("bge").api_key_value() == "sk-local"
    assert registry.default_chat().id == "qwen"
    assert registry.default_embedding().dimensions == 1024
    assert registry.default_rerank().id == "jina-rerank"
    assert registry.get("qwen").function_calling is False
    assert registry.get("gpt-4o").price(1000, 2000) == pytest.approx(22.5)


def test_json_models_file_and_first_model_of_type_is_default(tmp_path: Path) -> None:
    doc = {
        "models": [{"id": "e", "type": "embedding"}, {"id": "a", "max_context": 4000, "max_response": 100}]
    }
    registry = load_model_registry(settings_for(tmp_path, "models.json", json.dumps(doc)), environ={})
    assert registry.default_chat_id == "a"
    assert registry.default_embedding_id == "e"
    with pytest.raises(ModelNotFoundError, match="no rerank model is configured"):
        registry.default_rerank()


def test_unknown_model_id_lists_known_ids(tmp_path: Path) -> None:
    registry = load_model_registry(
        settings_for(tmp_path, "m.yaml", GOOD_YAML), environ={"TEST_OPENAI_KEY": "k"}
    )
    with pytest.raises(ModelNotFoundError) as info:
        registry.get("gpt-5")
    assert str(info.value) == "unknown model 'gpt-5' (known: bge, gpt-4o, jina-rerank, qwen)"


INVALID_FILES = [
    (
        "models.yaml",
        "models:\n  - id: gpt-4o\n    max_context: lots\n",
        "FATHOM_MODELS_FILE={path}: model 'gpt-4o' field 'max_context': "
        "Input should be a valid integer, unable to parse string as an integer",
    ),
    (
        "models.yaml",
        "models:\n  - id: m1\n    type: chat\n",
        "FATHOM_MODELS_FILE={path}: model 'm1' field 'type': Input should be 'llm', 'embedding' or 'rerank'",
    ),
    (
        "models.yaml",
        "models:\n  - id: m1\n    max_contxt: 5\n",
        "FATHOM_MODELS_FILE={path}: model 'm1' field 'max_contxt': Extra inputs are not permitted",
    ),
    (
        "models.yaml",
        "models:\n  - type: llm\n",
        "FATHOM_MODELS_FILE={path}: model #1 field 'id': Field required",
    ),
    (
        "models.yaml",
        "models:\n  - id: m1\n    max_context: 1000\n    max_response: 2000\n",
        "FATHOM_MODELS_FILE={path}: model 'm1': max_response (2000) exceeds max_context (1000)",
    ),
    (
        "models.yaml",
        "models:\n  - id: m1\n  - id: m1\n",
        "FATHOM_MODELS_FILE={path}: model 'm1' field 'id': duplicate model id",
    ),
    (
        "models.yaml",
        "models:\n  - id: m1\n    api_key_env: NOT_SET_ANYWHERE\n",
        "FATHOM_MODELS_FILE={path}: model 'm1' field 'api_key_env': "
        "environment variable NOT_SET_ANYWHERE is not set",
    ),
    (
        "models.yaml",
        "models:\n  - id: m1\n    api_key: a\n    api_key_env: B\n",
        "FATHOM_MODELS_FILE={path}: model 'm1' field 'api_key_env': give api_key or api_key_env, not both",
    ),
    (
        "models.yaml",
        "default_chat: nope\nmodels:\n  - id: m1\n",
        "FATHOM_MODELS_FILE={path}: field 'default_chat': unknown model 'nope' (known llm: m1)",
    ),
    (
        "models.yaml",
        "default_embedding: m1\nmodels:\n  - id: m1\n",
        "FATHOM_MODELS_FILE={path}: field 'default_embedding': model 'm1' has type 'llm', not 'embedding'",
    ),
    (
        "models.yaml",
        "modles: []\n",
        "FATHOM_MODELS_FILE={path}: field 'modles': unknown key "
        "(allowed: default_chat, default_embedding, default_rerank, models)",
    ),
    (
        "models.yaml",
        "models:\n  - id: [unclosed\n",
        "FATHOM_MODELS_FILE={path}: invalid YAML at line 3 column 1: "
        "expected ',' or ']', but got '<stream end>'",
    ),
    (
        "models.json",
        '{"models": [}',
        "FATHOM_MODELS_FILE={path}: invalid JSON at line 1 column 13: Expecting value",
    ),
    (
        "models.toml",
        "x = 1",
        "FATHOM_MODELS_FILE={path}: unsupported extension '.toml' (use .yaml, .yml or .json)",
    ),
    (
        "models.yaml",
        "- just a string\n",
        "FATHOM_MODELS_FILE={path}: model #1: expected a mapping, got str",
    ),
]


@pytest.mark.parametrize(("name", "text", "expected"), INVALID_FILES)
def test_invalid_models_file_gives_one_line_error_naming_file_model_and_field(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    settings = settings_for(tmp_path, name, text)
    with pytest.raises(ModelsFileError) as info:
        load_model_registry(settings, environ={})
    message = str(info.value)
    assert message == expected.format(path=tmp_path / name)
    assert "\n" not in message
    assert isinstance(info.value, ConfigError)


def test_missing_models_file_is_one_line_config_error(tmp_path: Path) -> None:
    settings = Settings(models_file=tmp_path / "absent.yaml")
    with pytest.raises(ConfigError) as info:
        load_model_registry(settings, environ={})
    assert str(info.value) == f"FATHOM_MODELS_FILE={tmp_path / 'absent.yaml'}: file not found"


def test_no_file_and_no_shortcuts_gives_empty_registry_that_explains_itself() -> None:
    registry = load_model_registry(Settings(), environ={})
    assert registry.models == []
    with pytest.raises(ModelNotFoundError, match="set FATHOM_OPENAI_BASE_URL and FATHOM_CHAT_MODEL"):
        registry.default_chat()


def test_env_shortcuts_build_one_chat_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FATHOM_OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/")
    monkeypatch.setenv("FATHOM_OPENAI_API_KEY", "sk-shortcut")
    monkeypatch.setenv("FATHOM_CHAT_MODEL", "qwen2.5:7b")
    registry = load_model_registry(Settings(), environ={})
    model = registry.default_chat()
    assert (model.id, model.base_url, model.api_key_value()) == (
        "qwen2.5:7b",
        "http://127.0.0.1:11434/v1",
        "sk-shortcut",
    )
    assert model.type == "llm" and model.function_calling is True


def test_api_key_alone_targets_openai_with_default_model() -> None:
    registry = load_model_registry(Settings(openai_api_key="sk-x"), environ={})  # type: ignore[arg-type]
    model = registry.default_chat()
    assert model.base_url == "https://api.openai.com/v1"
    assert model.id == "gpt-4o-mini"


def test_chat_model_shortcut_selects_a_model_listed_in_the_file(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "m.yaml", GOOD_YAML, chat_model="gpt-4o")
    registry = load_model_registry(settings, environ={"TEST_OPENAI_KEY": "k"})
    assert registry.default_chat().id == "gpt-4o"
    assert len(registry) == 4


def test_chat_model_shortcut_naming_an_embedding_model_is_rejected(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, "m.yaml", GOOD_YAML, chat_model="bge")
    with pytest.raises(ModelsFileError, match="FATHOM_CHAT_MODEL=bge: model has type 'embedding', not 'llm'"):
        load_model_registry(settings, environ={"TEST_OPENAI_KEY": "k"})


def test_registry_filters_by_type() -> None:
    from fathom.llm import ModelConfig

    registry = ModelRegistry([ModelConfig(id="a"), ModelConfig(id="b", type="embedding")])
    assert [m.id for m in registry.of_type("embedding")] == ["b"]
    assert "a" in registry and "z" not in registry
