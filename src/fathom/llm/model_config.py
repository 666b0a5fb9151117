"""One model endpoint as the admin configured it (an entry of the models file)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

ModelType = Literal["llm", "embedding", "rerank"]

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"


class ModelConfig(BaseModel):
    """An OpenAI-compatible model endpoint with its limits, capabilities and prices.

    Prices are per 1,000 tokens (``input_price`` for prompt tokens, ``output_price`` for completion
    tokens), in whatever unit the operator bills in (FastGPT calls it points).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="Id used inside Fathom (apps, workflows, usage records).")
    type: ModelType = "llm"
    provider: Literal["openai"] = "openai"
    name: str | None = Field(default=None, description="Display name; defaults to the id.")
    api_model: str | None = Field(default=None, description="Model name sent to the endpoint; default: id.")
    base_url: str = DEFAULT_OPENAI_BASE_URL
    api_key: SecretStr | None = None
    api_key_env: str | None = Field(default=None, description="Name of an env var holding the API key.")
    max_context: int = Field(default=8192, gt=0, description="Context window in tokens.")
    max_response: int = Field(default=4096, gt=0, description="Most tokens one reply may have.")
    function_calling: bool = True
    vision: bool = False
    reasoning: bool = False
    input_price: float = Field(default=0.0, ge=0)
    output_price: float = Field(default=0.0, ge=0)
    timeout: float = Field(default=120.0, gt=0, description="Seconds for one request (read between chunks).")
    connect_timeout: float = Field(default=5.0, gt=0)
    max_retries: int = Field(default=2, ge=0, le=10)
    dimensions: int | None = Field(default=None, gt=0, description="Embedding size (embedding models).")
    batch_size: int = Field(default=32, gt=0, description="Inputs per embeddings request.")
    default_params: dict[str, Any] = Field(
        default_factory=dict, description="Extra request body fields sent on every call (e.g. vLLM options)."
    )

    @model_validator(mode="after")
    def _response_fits_context(self) -> ModelConfig:
        if self.type == "llm" and self.max_response > self.max_context:
            raise ValueError(f"max_response ({self.max_response}) exceeds max_context ({self.max_context})")
        return self

    @property
    def display_name(self) -> str:
        """The name shown to users."""
        return self.name or self.id

    @property
    def request_model(self) -> str:
        """The model name put in API requests."""
        return self.api_model or self.id

    def api_key_value(self) -> str | None:
        """The resolved API key (the registry fills it in from ``api_key_env`` at load time)."""
        return self.api_key.get_secret_value() if self.api_key is not None else None

    def price(self, input_tokens: int, output_tokens: int) -> float:
        """What one call with these token counts costs, from the per-1k prices."""
        return (input_tokens * self.input_price + output_tokens * self.output_price) / 1000.0
