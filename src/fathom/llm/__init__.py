"""fathom.llm: model registry, OpenAI-compatible chat/embedding/rerank clients, token counting."""

from fathom.llm.chat import ChatStream, OpenAIChatModel
from fathom.llm.embedding import EmbeddingResult, OpenAIEmbeddingModel
from fathom.llm.errors import ModelNotFoundError, ModelRequestError, ModelsFileError
from fathom.llm.events import (
    CompletionResult,
    FinishEvent,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallStart,
    ToolParamsDelta,
    Usage,
    UsageEvent,
)
from fathom.llm.health import check_model_endpoint
from fathom.llm.local_embedding import (
    LOCAL_EMBEDDING_DIMENSIONS,
    LOCAL_EMBEDDING_MODEL_ID,
    LocalEmbedder,
    LocalEmbeddingUnavailable,
)
from fathom.llm.model_config import ModelConfig, ModelType
from fathom.llm.openai_client import make_openai_client
from fathom.llm.protocols import ChatModel, EmbeddingModel, RerankModel
from fathom.llm.registry import ModelRegistry, load_model_registry
from fathom.llm.rerank import OpenAIRerankModel, RerankHit, RerankResult
from fathom.llm.retry import RetryPolicy
from fathom.llm.tokens import count_message_tokens, count_tokens, seed_tiktoken_cache

__all__ = [
    "LOCAL_EMBEDDING_DIMENSIONS",
    "LOCAL_EMBEDDING_MODEL_ID",
    "LocalEmbedder",
    "LocalEmbeddingUnavailable",
    "ChatModel",
    "ChatStream",
    "CompletionResult",
    "EmbeddingModel",
    "EmbeddingResult",
    "FinishEvent",
    "ModelConfig",
    "ModelNotFoundError",
    "ModelRegistry",
    "ModelRequestError",
    "ModelType",
    "ModelsFileError",
    "OpenAIChatModel",
    "OpenAIEmbeddingModel",
    "OpenAIRerankModel",
    "ReasoningDelta",
    "RerankHit",
    "RerankModel",
    "RerankResult",
    "RetryPolicy",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallStart",
    "ToolParamsDelta",
    "Usage",
    "UsageEvent",
    "check_model_endpoint",
    "count_message_tokens",
    "count_tokens",
    "load_model_registry",
    "make_openai_client",
    "seed_tiktoken_cache",
]
