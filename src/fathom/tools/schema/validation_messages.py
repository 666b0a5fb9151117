"""Render `jsonschema` errors as FastGPT (AJV) does: `"{instancePath or '/'} {message}"`.

Messages for the common keywords use AJV v8's wording (`must be string`, `must have required property
'query'`, `must NOT have additional properties`, ...) so that tool errors read the same as in FastGPT;
other keywords fall back to the `jsonschema` message. Branch errors of `oneOf` / `anyOf` come before the
combinator's own error, as with AJV's `allErrors`.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator
from typing import Any

from jsonschema.exceptions import ValidationError


def json_pointer(path: Iterable[str | int]) -> str:
    """RFC 6901 pointer of an instance location (`""` for the root)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def _literal(value: Any) -> str:
    """A limit as AJV prints it (numbers without a trailing `.0` when integral)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _quoted_name(message: str, suffix: str) -> str | None:
    """The property name jsonschema printed as a Python repr before `suffix`."""
    if not message.endswith(suffix):
        return None
    try:
        name = ast.literal_eval(message[: -len(suffix)])
    except (ValueError, SyntaxError):
        return None
    return name if isinstance(name, str) else None


def _type_message(expected: Any) -> str:
    if isinstance(expected, list):
        return "must be " + ",".join(str(item) for item in expected)
    return f"must be {expected}"


def _required_message(error: ValidationError) -> str:
    name = _quoted_name(error.message, " is a required property")
    return f"must have required property '{name}'" if name is not None else error.message


def _dependency_message(error: ValidationError) -> str:
    head, sep, tail = error.message.partition(" is a dependency of ")
    if not sep:
        return error.message
    try:
        dependency, owner = ast.literal_eval(head), ast.literal_eval(tail)
    except (ValueError, SyntaxError):
        return error.message
    return f"must have property {dependency} when property {owner} is present"


def _limit(word: str, unit: str) -> Any:
    return lambda e: f"must NOT have {word} than {_literal(e.validator_value)} {unit}"


_SIMPLE: dict[str, Any] = {
    "type": lambda e: _type_message(e.validator_value),
    "required": _required_message,
    "dependentRequired": _dependency_message,
    "additionalProperties": lambda e: "must NOT have additional properties",
    "unevaluatedProperties": lambda e: "must NOT have unevaluated properties",
    "unevaluatedItems": lambda e: "must NOT have unevaluated items",
    "minLength": _limit("fewer", "characters"),
    "maxLength": _limit("more", "characters"),
    "minItems": _limit("fewer", "items"),
    "maxItems": _limit("more", "items"),
    "minProperties": _limit("fewer", "properties"),
    "maxProperties": _limit("more", "properties"),
    "minimum": lambda e: f"must be >= {_literal(e.validator_value)}",
    "maximum": lambda e: f"must be <= {_literal(e.validator_value)}",
    "exclusiveMinimum": lambda e: f"must be > {_literal(e.validator_value)}",
    "exclusiveMaximum": lambda e: f"must be < {_literal(e.validator_value)}",
    "multipleOf": lambda e: f"must be multiple of {_literal(e.validator_value)}",
    "pattern": lambda e: f'must match pattern "{e.validator_value}"',
    "enum": lambda e: "must be equal to one of the allowed values",
    "const": lambda e: "must be equal to constant",
    "uniqueItems": lambda e: "must NOT have duplicate items",
    "oneOf": lambda e: "must match exactly one schema in oneOf",
    "anyOf": lambda e: "must match a schema in anyOf",
    "not": lambda e: "must NOT be valid",
    "contains": lambda e: "must contain at least 1 valid item(s)",
    "minContains": lambda e: f"must contain at least {_literal(e.validator_value)} valid item(s)",
    "maxContains": lambda e: f"must contain at most {_literal(e.validator_value)} valid item(s)",
}


def _error_message(error: ValidationError) -> str:
    """AJV-style message of one error (without the path)."""
    keyword = error.validator
    if keyword is None:
        return "boolean schema is false"
    if keyword == "dependencies" and isinstance(error.validator_value, dict):
        return _dependency_message(error)
    render = _SIMPLE.get(str(keyword))
    if render is None:
        return error.message or "is invalid"
    return str(render(error))


def _flatten(errors: Iterable[ValidationError]) -> Iterator[ValidationError]:
    """Errors in AJV order: a combinator's branch errors, then the combinator error itself."""
    for error in errors:
        if error.validator in ("oneOf", "anyOf") and error.context:
            yield from _flatten(error.context)
        yield error


def format_errors(errors: Iterable[ValidationError]) -> list[str]:
    """`"{instancePath or '/'} {message}"` for every error, duplicates removed, order kept."""
    lines: list[str] = []
    seen: set[str] = set()
    for error in _flatten(errors):
        line = f"{json_pointer(error.absolute_path) or '/'} {_error_message(error)}"
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return lines
