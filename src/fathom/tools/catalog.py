"""The tool catalog (seed 004): register tools once, bind per request, get model tools and a runtime.

``define_tool_catalog([...])`` checks ids are unique. ``catalog.bind(app=..., signal=...)`` gives a
:class:`BoundToolCatalog` whose ``model_tools()`` lists the active tools in declaration order and
whose ``invoke(tool_id, input)`` parses the input with the tool's schema, authorizes it once,
executes it (which must not repeat the authorization) and validates the output with
``parse_output``. ``run(call, messages)`` is the model-facing path that never raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from fathom.tools.cancel import SignalLike
from fathom.tools.contract import ToolCall, ToolCallFunction, ToolDefinition, ToolResult, as_tool_definition
from fathom.tools.errors import ToolInputError, ToolNotFoundError
from fathom.tools.run_tool import execute_tool, run_tool

__all__ = ["BoundToolCatalog", "ToolCatalog", "ToolInvocation", "define_tool_catalog"]


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """What ``invoke`` returns: the validated output ``value`` of tool ``tool_id``."""

    tool_id: str
    value: Any


class ToolCatalog:
    """An ordered, immutable set of tool definitions with unique ids."""

    def __init__(self, tools: Iterable[Any]) -> None:
        definitions = [as_tool_definition(tool) for tool in tools]
        by_id: dict[str, ToolDefinition] = {}
        for definition in definitions:
            if not definition.name:
                raise ValueError("Tool id must be a non-empty string")
            if definition.name in by_id:
                raise ValueError(f"Duplicate tool id: {definition.name}")
            by_id[definition.name] = definition
        self._tools = tuple(definitions)
        self._by_id = by_id

    def ids(self) -> list[str]:
        """Every tool id, in declaration order (active or not)."""
        return [tool.name for tool in self._tools]

    def get(self, tool_id: str) -> ToolDefinition:
        try:
            return self._by_id[tool_id]
        except KeyError:
            raise ToolNotFoundError(tool_id) from None

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._by_id

    def bind(
        self, *, app: Any = None, signal: SignalLike | None = None, timeout: float | None = None
    ) -> BoundToolCatalog:
        """Bind the catalog to one app/request (its permissions, services and cancellation)."""
        return BoundToolCatalog(self, app=app, signal=signal, timeout=timeout)


class BoundToolCatalog:
    """A catalog bound to an app: the model-visible tools and the runtime that executes them."""

    def __init__(
        self,
        catalog: ToolCatalog,
        *,
        app: Any = None,
        signal: SignalLike | None = None,
        timeout: float | None = None,
    ) -> None:
        self.catalog = catalog
        self.app = app
        self.signal = signal
        self.timeout = timeout

    def tools(self) -> list[ToolDefinition]:
        """Active tools, in declaration order."""
        return [tool for tool in self.catalog if tool.is_active(self.app)]

    def ids(self) -> list[str]:
        return [tool.name for tool in self.tools()]

    def model_tools(self) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` array: exactly the active tools ("visible ≡ executable")."""
        return [tool.schema for tool in self.tools()]

    def _active(self, tool_id: str) -> ToolDefinition:
        definition = self.catalog._by_id.get(tool_id)
        if definition is None or not definition.is_active(self.app):
            raise ToolNotFoundError(tool_id)
        return definition

    async def invoke(
        self, tool_id: str, input: Any = None, *, messages: Sequence[Any] = ()
    ) -> ToolInvocation:
        """Host-facing call: raises :class:`ToolNotFoundError`, :class:`ToolInputError`, the
        authorization error, the tool's own error or :class:`ToolCancelledError`."""
        definition = self._active(tool_id)
        parsed = definition.parse_value({} if input is None else input)
        if not parsed.success:
            raise ToolInputError(parsed.error_message)
        call = ToolCall(id="", function=ToolCallFunction(name=tool_id, arguments=""))
        value = await execute_tool(
            definition,
            parsed.data,
            call=call,
            messages=messages,
            app=self.app,
            signal=self.signal,
            timeout=self.timeout,
        )
        return ToolInvocation(tool_id=tool_id, value=value)

    async def run(self, call: Any, messages: Sequence[Any] = ()) -> ToolResult:
        """Model-facing call: a :class:`ToolResult` on every path (see :func:`run_tool`)."""
        return await run_tool(
            call, messages, self.tools(), signal=self.signal, timeout=self.timeout, app=self.app
        )


def define_tool_catalog(tools: Iterable[Any]) -> ToolCatalog:
    """Create a :class:`ToolCatalog` from definitions or seed-shaped dicts."""
    return ToolCatalog(tools)
