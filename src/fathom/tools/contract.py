"""The tool contract: one shape for the seed-002 declarative tool and the seed-004 catalog entry.

A :class:`ToolDefinition` carries the model-facing schema (name = id, description, JSON-Schema
parameters), how raw model arguments become parameters (``parse_params`` / ``parse_input``), and
how it runs (``authorize`` then ``execute`` then ``parse_output``). :class:`ToolResult` mirrors
FastGPT's ``ToolExecuteResult`` (camelCase on the wire). :class:`ToolCall` is the OpenAI wire shape
of one tool call and accepts plain dicts and the ``openai`` SDK's objects.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from fathom.tools._validation import ParamsChecker

if TYPE_CHECKING:
    from fathom.tools.cancel import SignalLike

__all__ = [
    "ParseResult",
    "ToolCall",
    "ToolCallFunction",
    "ToolContext",
    "ToolDefinition",
    "ToolResult",
    "as_tool_definition",
    "parse_json_args",
    "to_tool_result",
]


class _Wire(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow", alias_generator=to_camel)


class ToolCallFunction(_Wire):
    """``call.function``: the tool name and its raw JSON arguments, as the model sent them."""

    name: str
    arguments: str | None = ""


class ToolCall(_Wire):
    """One OpenAI ``ChatCompletionMessageToolCall``: ``{id, type, function: {name, arguments}}``."""

    id: str = ""
    type: Literal["function"] = "function"
    function: ToolCallFunction

    @classmethod
    def coerce(cls, value: Any) -> ToolCall:
        """Accept a :class:`ToolCall`, a wire dict, or any object with ``.function.name`` (openai SDK)."""
        if isinstance(value, ToolCall):
            return value
        if isinstance(value, Mapping):
            return cls.model_validate(value)
        return cls.model_validate(value, from_attributes=True)


class ToolResult(_Wire):
    """What a tool call produced. ``response`` is the text the model sees next.

    ``error_message`` is set on every failure path (not found, bad arguments, refused, raised,
    cancelled) so callers can tell a failure from an answer without parsing text.
    """

    response: str = ""
    assistant_messages: list[dict[str, Any]] = Field(default_factory=list)
    usages: list[dict[str, Any]] = Field(default_factory=list)
    interactive: dict[str, Any] | None = None
    stop: bool = False
    error_message: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def failure(cls, text: str) -> ToolResult:
        """A model-visible failure: ``response`` and ``error_message`` both hold ``text``."""
        return cls(response=text, error_message=text)

    def to_wire(self) -> dict[str, Any]:
        """FastGPT's camelCase dict."""
        return self.model_dump(by_alias=True)


@dataclass(frozen=True, slots=True)
class ParseResult:
    """``{success: true, data}`` or ``{success: false, errorMessage}`` (shown to the model)."""

    success: bool
    data: Any = None
    error_message: str = ""

    @classmethod
    def ok(cls, data: Any) -> ParseResult:
        return cls(True, data)

    @classmethod
    def fail(cls, error_message: str) -> ParseResult:
        return cls(False, None, error_message)


@dataclass(slots=True)
class ToolContext:
    """What ``authorize`` and ``execute`` receive: the call, the messages so far, the parsed params,
    the bound app (catalog) and a cancellation signal that is never ``None`` once execution starts."""

    call: ToolCall
    messages: Sequence[Any]
    params: Any
    signal: SignalLike
    app: Any = None
    tool: ToolDefinition | None = None


Execute = Callable[[ToolContext], Any]
Authorize = Callable[[Any, ToolContext], Any]


@runtime_checkable
class ToolSource(Protocol):
    """Anything that yields tool definitions (an OpenAPI tool set, an MCP server, ...)."""

    def tool_definitions(self) -> list[ToolDefinition]: ...


def parse_json_args(raw: str | None, *, strict: bool = False) -> ParseResult:
    """Default argument parser (seed 002 ``parseJsonArgs``): empty, not JSON or not a JSON object →
    ``{}``, so validation then names every missing field in one readable error. ``strict=True``
    instead refuses text that is not a JSON object with a model-visible parse error."""
    if raw is None or not raw.strip():
        return ParseResult.ok({})
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        if not strict:
            return ParseResult.ok({})
        return ParseResult.fail(
            f"Tool arguments are not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno}). "
            "Send the arguments as one JSON object."
        )
    if not isinstance(value, dict):
        if not strict:
            return ParseResult.ok({})
        return ParseResult.fail(
            f"Tool arguments must be a JSON object, got {type(value).__name__}. "
            "Send the arguments as one JSON object."
        )
    return ParseResult.ok(value)


def _validate_params(checker: ParamsChecker, schema: Mapping[str, Any], value: Any) -> ParseResult:
    errors = checker.errors(schema, value)
    if errors:
        return ParseResult.fail("Tool input validation failed: " + "; ".join(errors))
    return ParseResult.ok(value)


@dataclass(eq=False)
class ToolDefinition:
    """A tool the model can call and the runtime can execute ("visible ≡ executable").

    - ``name`` is the id: the function name the model calls.
    - ``parameters`` is the JSON Schema of the arguments (``None``: the model sends none).
    - ``parse_params(raw_args)`` turns the raw argument string into params or a model-visible
      error; without it arguments are parsed as JSON (text that is not a JSON object counts as
      ``{}``; ``strict_args=True`` refuses it instead) and, when ``validate`` is true, checked
      against ``parameters`` (``parse_input`` replaces that check for already-decoded input).
    - ``authorize(params, ctx)`` runs once, before ``execute``; raising refuses the call.
    - ``execute(ctx)`` returns a :class:`ToolResult`, a string, or any JSON-able value.
    - ``parse_output(value)`` validates what ``execute`` returned (e.g. a cached replay).
    - ``active(app)`` hides the tool for an app (catalog binding); omitted means active.
    - ``timeout`` (seconds) bounds one call.
    """

    name: str
    execute: Execute
    description: str = ""
    parameters: dict[str, Any] | None = None
    parse_params: Callable[[str], ParseResult] | None = None
    parse_input: Callable[[Any], ParseResult] | None = None
    kind: str | None = None
    active: Callable[[Any], bool] | None = None
    authorize: Authorize | None = None
    parse_output: Callable[[Any], Any] | None = None
    timeout: float | None = None
    validate: bool = True
    strict_args: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    _checker: ParamsChecker = field(default_factory=lambda: ParamsChecker(), init=False, repr=False)

    @property
    def id(self) -> str:
        """Stable id; also the name the model calls."""
        return self.name

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI ``ChatCompletionTool`` the model sees."""
        function: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.parameters is not None:
            function["parameters"] = self.parameters
        return {"type": "function", "function": function}

    def is_active(self, app: Any) -> bool:
        return True if self.active is None else bool(self.active(app))

    def parse_arguments(self, raw: str | Mapping[str, Any] | None) -> ParseResult:
        """Raw model arguments (string, or an already-decoded mapping) → params or error text."""
        if self.parse_params is not None:
            text = raw if raw is None or isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
            return self.parse_params(text or "")
        if isinstance(raw, Mapping):
            return self.parse_value(dict(raw))
        decoded = parse_json_args(raw, strict=self.strict_args)
        if not decoded.success:
            return decoded
        return self.parse_value(decoded.data)

    def parse_value(self, value: Any) -> ParseResult:
        """Validate an already-decoded input value."""
        if self.parse_input is not None:
            return self.parse_input(value)
        if self.parse_params is not None:
            return self.parse_params(json.dumps(value, ensure_ascii=False))
        if self.validate and self.parameters:
            return _validate_params(self._checker, self.parameters, value)
        return ParseResult.ok(value)

    @classmethod
    def from_model_tool(
        cls,
        schema: Mapping[str, Any],
        execute: Execute,
        *,
        parse_params: Callable[[str], ParseResult] | None = None,
        **kwargs: Any,
    ) -> ToolDefinition:
        """Build from an OpenAI tool dict (``{type, function: {name, description, parameters}}``)."""
        function = schema.get("function", schema)
        return cls(
            name=str(function["name"]),
            description=str(function.get("description") or ""),
            parameters=function.get("parameters"),
            execute=execute,
            parse_params=parse_params,
            **kwargs,
        )


def _wrap_entry_execute(fn: Callable[..., Any]) -> Execute:
    def execute(ctx: ToolContext) -> Any:
        return fn(ctx.params, ctx)

    return execute


def _wrap_parse_callable(fn: Callable[[Any], Any]) -> Callable[[Any], ParseResult]:
    def parse(value: Any) -> ParseResult:
        try:
            return ParseResult.ok(fn(value))
        except Exception as exc:
            from fathom.tools.errors import error_text

            return ParseResult.fail(f"Tool input validation failed: {error_text(exc)}")

    return parse


def _coerce_parse_result(value: Any) -> ParseResult:
    if isinstance(value, ParseResult):
        return value
    if isinstance(value, Mapping):
        if value.get("success"):
            return ParseResult.ok(value.get("data"))
        return ParseResult.fail(str(value.get("errorMessage") or value.get("error_message") or ""))
    raise TypeError(f"parseParams must return a ParseResult or {{success, data|errorMessage}}, got {value!r}")


def as_tool_definition(value: Any) -> ToolDefinition:
    """Accept a :class:`ToolDefinition` or a dict in seed-002 (``schema``/``parseParams``/``execute(ctx)``)
    or seed-004 (``id``/``description``/``inputSchema``/``authorize``/``execute(input, ctx)``/
    ``parseOutput``) shape."""
    if isinstance(value, ToolDefinition):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"Not a tool definition: {value!r}")
    if "schema" in value:
        raw_parse = value.get("parseParams") or value.get("parse_params")
        parse_params = None
        if raw_parse is not None:

            def parse_params(raw: str, _fn: Callable[[str], Any] = raw_parse) -> ParseResult:
                return _coerce_parse_result(_fn(raw))

        return ToolDefinition.from_model_tool(
            value["schema"],
            value["execute"],
            parse_params=parse_params,
            kind=value.get("kind"),
            timeout=value.get("timeout"),
        )
    input_schema = value.get("inputSchema", value.get("input_schema"))
    parameters: dict[str, Any] | None = None
    parse_input = None
    if isinstance(input_schema, Mapping):
        json_schema = input_schema.get("jsonSchema", input_schema.get("json_schema"))
        parse = input_schema.get("parse")
        if json_schema is not None or parse is not None:
            parameters = dict(json_schema) if json_schema is not None else None
            parse_input = _wrap_parse_callable(parse) if parse is not None else None
        else:
            parameters = dict(input_schema)
    elif input_schema is not None:
        parameters = getattr(input_schema, "json_schema", None)
        parse = getattr(input_schema, "parse", None)
        parse_input = _wrap_parse_callable(parse) if parse is not None else None
    return ToolDefinition(
        name=str(value.get("id") or value.get("name")),
        description=str(value.get("description") or ""),
        parameters=parameters,
        parse_input=parse_input,
        execute=_wrap_entry_execute(value["execute"]),
        kind=value.get("kind"),
        active=value.get("active"),
        authorize=value.get("authorize"),
        parse_output=value.get("parseOutput", value.get("parse_output")),
        timeout=value.get("timeout"),
    )


_RESULT_KEYS = frozenset(
    {"response", "assistantMessages", "usages", "interactive", "stop", "errorMessage", "metadata"}
)


def to_tool_result(value: Any) -> ToolResult:
    """Normalise what ``execute`` returned: a result, text, a pydantic model, or a JSON-able value."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult(response="")
    if isinstance(value, str):
        return ToolResult(response=value)
    if isinstance(value, BaseModel):
        return ToolResult(response=value.model_dump_json(by_alias=True))
    if isinstance(value, Mapping) and isinstance(value.get("response"), str) and set(value) <= _RESULT_KEYS:
        return ToolResult.model_validate(value)
    return ToolResult(response=json.dumps(value, ensure_ascii=False, default=str))


async def maybe_await(value: Any) -> Any:
    """Await ``value`` if it is awaitable (sync and async callbacks are both accepted)."""
    if inspect.isawaitable(value):
        return await value
    return value
