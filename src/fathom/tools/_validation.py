"""The default argument check of :class:`~fathom.tools.ToolDefinition`: the full raw schema, compiled
once (:class:`fathom.tools.schema.CompiledSchema`: a fast path for valid inputs, the cached
``jsonschema`` validator with AJV-style messages for the rest)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fathom.tools.schema import CompiledSchema, default_validator_cache

__all__ = ["ParamsChecker"]


class ParamsChecker:
    """The errors of inputs against one schema, compiled on first use and kept: no per-call lookup.

    It holds the schema object it was given; replacing that object (``tool.parameters = {...}``) is
    noticed and recompiles, changing it in place after the first call is not."""

    __slots__ = ("_compiled", "_schema")

    def __init__(self) -> None:
        self._schema: object = None
        self._compiled: CompiledSchema | None = None

    def errors(self, schema: Mapping[str, Any], params: Any) -> list[str]:
        compiled = self._compiled
        if compiled is None or self._schema is not schema:
            compiled = default_validator_cache.compile(schema)
            self._schema, self._compiled = schema, compiled
        return compiled.validate(params).errors
