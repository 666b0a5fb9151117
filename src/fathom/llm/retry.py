"""When and how long to wait before retrying a model request (429, 5xx, timeouts; never other 4xx)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import openai

from fathom.llm.errors import (
    EndpointStatusError,
    EndpointStreamError,
    EndpointTimeout,
    EndpointUnreachable,
    ModelRequestError,
)
from fathom.llm.wire import error_message

MAX_RETRY_AFTER = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter; a server's ``Retry-After`` (up to 60 s) wins when given.

    ``max_retries=None`` uses the model config's ``max_retries``.
    """

    max_retries: int | None = None
    initial_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry_number`` (1-based)."""
        if retry_after is not None and 0 <= retry_after <= MAX_RETRY_AFTER:
            return retry_after
        base = min(self.initial_delay * (2.0 ** (retry_number - 1)), self.max_delay)
        return base * (1 - self.jitter * random.random())


def _is_retryable_status(status: int) -> bool:
    """429 and 5xx are retried; every other status is the caller's fault and is not."""
    return status == 429 or status >= 500


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's requested delay from ``retry-after-ms`` / ``retry-after`` headers, if any."""
    headers = exc.headers if isinstance(exc, EndpointStatusError) else None
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            continue
    return None


def to_model_error(exc: BaseException, model: str, attempts: int) -> ModelRequestError:
    """Describe an SDK/transport failure as a :class:`ModelRequestError`."""
    if isinstance(exc, ModelRequestError):
        return exc
    if isinstance(exc, EndpointStatusError):
        return ModelRequestError(
            f"model '{model}' request failed with HTTP {exc.status}: {exc.message}",
            model=model,
            status_code=exc.status,
            retryable=_is_retryable_status(exc.status),
            request_id=exc.headers.get("x-request-id"),
            attempts=attempts,
        )
    if isinstance(exc, EndpointTimeout):
        return ModelRequestError(
            f"model '{model}' request timed out", model=model, retryable=True, attempts=attempts
        )
    if isinstance(exc, EndpointUnreachable):
        return ModelRequestError(
            f"model '{model}' endpoint unreachable: {exc}", model=model, retryable=True, attempts=attempts
        )
    if isinstance(exc, EndpointStreamError):
        return ModelRequestError(
            f"model '{model}' stream error: {exc.message}", model=model, attempts=attempts
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _status_message(exc)
        return ModelRequestError(
            f"model '{model}' request failed with HTTP {status}: {message}",
            model=model,
            status_code=status,
            retryable=_is_retryable_status(status),
            request_id=exc.request_id,
            attempts=attempts,
        )
    if isinstance(exc, openai.APITimeoutError):
        return ModelRequestError(
            f"model '{model}' request timed out", model=model, retryable=True, attempts=attempts
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return ModelRequestError(
            f"model '{model}' endpoint unreachable: {cause}", model=model, retryable=True, attempts=attempts
        )
    if isinstance(exc, openai.APIError):
        return ModelRequestError(
            f"model '{model}' stream error: {exc.message}", model=model, attempts=attempts
        )
    return ModelRequestError(f"model '{model}' request failed: {exc}", model=model, attempts=attempts)


def _status_message(exc: openai.APIStatusError) -> str:
    return error_message(exc.body) or exc.message
