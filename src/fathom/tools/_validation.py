"""The default argument check of :class:`~fathom.tools.ToolDefinition`: the full raw schema, through
:func:`fathom.tools.schema.validate_tool_runtime_params` (cached validator, AJV-style messages)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fathom.tools.schema import validate_tool_runtime_params

__all__ = ["runtime_params_errors"]


def runtime_params_errors(schema: Mapping[str, Any], params: Any) -> list[str]:
    """Errors of ``params`` against ``schema`` (an empty list when valid)."""
    return list(validate_tool_runtime_params(schema, params).errors)
