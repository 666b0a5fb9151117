"""Errors of the model layer."""

from __future__ import annotations

from collections.abc import Mapping

from fathom.config import ConfigError


class ModelsFileError(ConfigError):
    """The models file (or a model shortcut setting) is wrong. One line naming file, model and field."""


class ModelNotFoundError(LookupError):
    """A model id is not in the registry (or no default of the asked type is configured)."""


class ModelRequestError(Exception):
    """A call to a model endpoint failed after any retries.

    ``status_code`` is the HTTP status when the endpoint answered, ``retryable`` says whether the
    failure was of a kind we retry (429, 5xx, timeouts, connection errors).
    """

    def __init__(
        self,
        message: str,
        *,
        model: str = "",
        status_code: int | None = None,
        retryable: bool = False,
        request_id: str | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.model = model
        self.status_code = status_code
        self.retryable = retryable
        self.request_id = request_id
        self.attempts = attempts


class EndpointError(Exception):
    """A streamed request to a model endpoint failed (``fathom.llm.http_stream``; see the subclasses)."""


class EndpointStatusError(EndpointError):
    """The endpoint answered with an error status; ``message`` is its own error text."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message
        self.headers = dict(headers)


class EndpointTimeout(EndpointError):
    """Connecting, or waiting for the next piece of the answer, took longer than allowed."""


class EndpointUnreachable(EndpointError):
    """No connection, or the connection broke before the answer ended."""


class EndpointStreamError(EndpointError):
    """The stream carried an ``error`` object (or text that is not JSON) instead of a chunk."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
