"""What the chat, embedding and rerank clients share: one configured OpenAI-compatible endpoint, its SDK
client (built by :func:`~fathom.llm.openai_client.make_openai_client`), the retry policy and the one
error translation (:func:`~fathom.llm.retry.to_model_error`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import openai

from fathom.llm.model_config import ModelConfig
from fathom.llm.openai_client import make_openai_client
from fathom.llm.retry import RetryPolicy, retry_after_seconds, to_model_error

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]


class EndpointClient:
    """The base of each model client: ``config``, ``client`` (an ``AsyncOpenAI``), ``retry``."""

    _failures: tuple[type[BaseException], ...] = (openai.OpenAIError,)
    """What a call may raise that :meth:`_with_retries` translates (and retries when retryable)."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        client: openai.AsyncOpenAI | None = None,
        retry: RetryPolicy | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.config = config
        self.client = client or make_openai_client(config)
        self.retry = retry or RetryPolicy()
        self._sleep = sleep

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self.client.close()

    @property
    def max_retries(self) -> int:
        """How many times a retryable failure is retried."""
        return self.config.max_retries if self.retry.max_retries is None else self.retry.max_retries

    def _retry_delay(self, exc: BaseException, attempt: int, *, retry_allowed: bool = True) -> float:
        """Seconds to wait before retrying after ``exc``, or raise it as a ModelRequestError."""
        error = to_model_error(exc, self.config.id, attempt)
        if not retry_allowed or not error.retryable or attempt > self.max_retries:
            raise error from exc
        return self.retry.delay(attempt, retry_after_seconds(exc))

    async def _with_retries(self, attempt_fn: Callable[[int], Awaitable[T]]) -> T:
        """``attempt_fn(attempt)`` until it succeeds or fails for good (as a ModelRequestError)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await attempt_fn(attempt)
            except self._failures as exc:
                delay = self._retry_delay(exc, attempt)
            await self._sleep(delay)
