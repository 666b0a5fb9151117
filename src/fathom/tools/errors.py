"""Error types of the tool layer and the one function that turns an exception into model-visible text."""

from __future__ import annotations

__all__ = [
    "ToolError",
    "ToolInputError",
    "ToolNotFoundError",
    "ToolOutputError",
    "ToolCancelledError",
    "error_text",
]


class ToolError(Exception):
    """Base class for errors raised by the tool layer to host code (never to the model loop)."""


class ToolNotFoundError(ToolError, LookupError):
    """No active tool has this id: ``Call tool not found: {name}``."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Call tool not found: {name}")
        self.name = name


class ToolInputError(ToolError, ValueError):
    """The input did not parse or validate; the message is the model-visible parse error."""


class ToolOutputError(ToolError, ValueError):
    """``parse_output`` rejected what the tool returned."""


class ToolCancelledError(ToolError):
    """The call was cancelled by its signal or ran past its timeout."""


def error_text(exc: BaseException) -> str:
    """FastGPT's ``getErrText``: the exception's message, else its class name."""
    text = str(exc).strip()
    if text:
        return text
    return type(exc).__name__
