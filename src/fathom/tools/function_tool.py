"""``function_tool``: a :class:`ToolDefinition` from a typed Python function.

The signature becomes a pydantic model (arguments are validated by it, errors go back to the model
with a hint to retry), the docstring gives the description and each parameter's description, and
the model's JSON Schema (titles removed) becomes the tool's ``parameters``. A parameter annotated
with :class:`ToolContext` receives the call context instead of a model argument.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from fathom.tools.contract import Authorize, ParseResult, ToolContext, ToolDefinition, parse_json_args
from fathom.tools.docstrings import parse_docstring

__all__ = ["FunctionTool", "function_tool"]

F = TypeVar("F", bound=Callable[..., Any])


def _strip_titles(schema: Any) -> Any:
    """Remove pydantic's generated ``title`` keys (noise for the model); keep property names."""
    if isinstance(schema, dict):
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
                out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
            else:
                out[key] = _strip_titles(value)
        return out
    if isinstance(schema, list):
        return [_strip_titles(item) for item in schema]
    return schema


def _format_errors(name: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        parts.append(f"{loc}: {err['msg']}")
    return f"Invalid arguments for tool {name}: " + "; ".join(parts) + ". Fix the errors and try again."


def _is_context(annotation: Any) -> bool:
    """``ToolContext`` or ``ToolContext | None``."""
    if annotation is ToolContext:
        return True
    args = getattr(annotation, "__args__", ())
    return ToolContext in args and all(a in (ToolContext, type(None)) for a in args)


@dataclass(eq=False)
class FunctionTool(ToolDefinition):
    """A :class:`ToolDefinition` built by :func:`function_tool`; still callable like the function."""

    function: Callable[..., Any] | None = None
    params_model: type[BaseModel] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        assert self.function is not None
        return self.function(*args, **kwargs)


def _build(
    fn: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    kind: str | None,
    authorize: Authorize | None,
    active: Callable[[Any], bool] | None,
    parse_output: Callable[[Any], Any] | None,
    timeout: float | None,
    strict: bool,
    run_sync_in_thread: bool,
) -> FunctionTool:
    tool_name = name or fn.__name__
    doc = parse_docstring(inspect.getdoc(fn))
    hints = get_type_hints(fn, include_extras=True)
    sig = inspect.signature(fn)
    fields: dict[str, Any] = {}
    ctx_param: str | None = None
    for param in sig.parameters.values():
        annotation = hints.get(param.name, Any)
        if _is_context(annotation):
            ctx_param = param.name
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"function_tool {tool_name}: *args/**kwargs are not supported")
        default = ... if param.default is inspect.Parameter.empty else param.default
        field_description = doc.params.get(param.name)
        if field_description:
            fields[param.name] = (annotation, Field(default, description=field_description))
        else:
            fields[param.name] = (annotation, default)
    config = ConfigDict(extra="forbid" if strict else "ignore", arbitrary_types_allowed=True)
    model = create_model(f"{tool_name}_params", __config__=config, **fields)
    parameters = _strip_titles(model.model_json_schema())
    parameters.setdefault("properties", {})
    field_names = tuple(fields)

    def parse_params(raw: str) -> ParseResult:
        if raw and raw.lstrip().startswith("{"):
            try:  # fast path: pydantic-core parses and validates the JSON in one pass
                parsed = model.model_validate_json(raw)
                return ParseResult.ok({key: getattr(parsed, key) for key in field_names})
            except ValidationError as exc:
                if not any(err["type"] == "json_invalid" for err in exc.errors(include_url=False)):
                    return ParseResult.fail(_format_errors(tool_name, exc))
        decoded = parse_json_args(raw, strict=strict)
        if not decoded.success:
            return decoded
        return parse_input(decoded.data)

    def parse_input(value: Any) -> ParseResult:
        try:
            parsed = model.model_validate(value)
        except ValidationError as exc:
            return ParseResult.fail(_format_errors(tool_name, exc))
        return ParseResult.ok({key: getattr(parsed, key) for key in field_names})

    is_async = inspect.iscoroutinefunction(fn)

    async def execute(ctx: ToolContext) -> Any:
        kwargs = dict(ctx.params or {})
        if ctx_param is not None:
            kwargs[ctx_param] = ctx
        if is_async:
            return await fn(**kwargs)
        if run_sync_in_thread:
            return await asyncio.to_thread(functools.partial(fn, **kwargs))
        return fn(**kwargs)

    return FunctionTool(
        name=tool_name,
        description=description if description is not None else doc.summary,
        parameters=parameters,
        execute=execute,
        parse_params=parse_params,
        parse_input=parse_input,
        kind=kind,
        active=active,
        authorize=authorize,
        parse_output=parse_output,
        timeout=timeout,
        function=fn,
        params_model=model,
    )


@overload
def function_tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def function_tool(
    *,
    name: str | None = None,
    description: str | None = None,
    kind: str | None = None,
    authorize: Authorize | None = None,
    active: Callable[[Any], bool] | None = None,
    parse_output: Callable[[Any], Any] | None = None,
    timeout: float | None = None,
    strict: bool = False,
    run_sync_in_thread: bool = True,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def function_tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    kind: str | None = None,
    authorize: Authorize | None = None,
    active: Callable[[Any], bool] | None = None,
    parse_output: Callable[[Any], Any] | None = None,
    timeout: float | None = None,
    strict: bool = False,
    run_sync_in_thread: bool = True,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Declare a tool from a typed function: ``@function_tool`` or ``@function_tool(name=...)``.

    ``strict`` rejects unknown argument keys and arguments that are not a JSON object (by default
    those parse as ``{}`` and validation names the missing fields); ``run_sync_in_thread`` runs
    plain (non-async) functions in a worker thread so they cannot block the event loop.
    """

    def decorate(func: Callable[..., Any]) -> FunctionTool:
        return _build(
            func,
            name=name,
            description=description,
            kind=kind,
            authorize=authorize,
            active=active,
            parse_output=parse_output,
            timeout=timeout,
            strict=strict,
            run_sync_in_thread=run_sync_in_thread,
        )

    if fn is not None:
        return decorate(fn)
    return decorate
