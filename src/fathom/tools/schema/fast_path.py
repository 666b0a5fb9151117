"""A fast yes/no check for the common tool-input schemas, compiled once per schema.

`compile_fast_check(schema, cls)` turns a schema into a plain Python predicate that answers "valid?"
the way the `jsonschema` class `cls` would, or returns None when the schema uses anything outside the
keywords below; the caller then always uses the full validator. A valid input is accepted by the
predicate alone (a few µs instead of `jsonschema`'s tens); an input it rejects goes to the full validator,
which decides and collects every error. So the predicate only ever shortens the path to "valid".

Each keyword mirrors the `jsonschema` function the class dispatches to (checked by identity at compile
time, so a dialect that changes a keyword falls back by itself): `type`, `enum`, `const`, `properties`,
`required`, `additionalProperties` (without `patternProperties`), `items` (one schema for every item),
`minItems`, `maxItems`, `uniqueItems`, `minLength`, `maxLength`, `pattern` (the `regex` module, as
:mod:`fathom.tools.schema.dialects`), `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
`multipleOf`, `minProperties`, `maxProperties`, `propertyNames`, `dependentRequired`, `allOf`, `anyOf`,
`oneOf`, `not`, `if`/`then`/`else`. Keywords the class does not know are ignored, as `jsonschema`
ignores them; `format` is never asserted. Any `$ref`-like keyword, `patternProperties`, `prefixItems`,
tuple `items`, `contains`, `dependencies`, `unevaluated*` … means no fast path for the whole schema.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import regex
from jsonschema import _keywords, _legacy_keywords
from jsonschema._utils import equal, uniq

from fathom.tools.schema import dialects

__all__ = ["FastCheck", "compile_fast_check"]

FastCheck = Callable[[Any], bool]


class _Unsupported(Exception):
    """The schema uses something the fast path does not mirror."""


# the jsonschema functions each supported keyword must dispatch to in the class
_EXPECTED: dict[str, tuple[Any, ...]] = {
    "type": (_keywords.type,),
    "enum": (_keywords.enum,),
    "const": (_keywords.const,),
    "properties": (_keywords.properties,),
    "required": (_keywords.required,),
    "additionalProperties": (_keywords.additionalProperties,),
    "items": (_keywords.items, _legacy_keywords.items_draft6_draft7_draft201909),
    "minItems": (_keywords.minItems,),
    "maxItems": (_keywords.maxItems,),
    "uniqueItems": (_keywords.uniqueItems,),
    "minLength": (_keywords.minLength,),
    "maxLength": (_keywords.maxLength,),
    "pattern": (dialects._pattern,),
    "minimum": (_keywords.minimum,),
    "maximum": (_keywords.maximum,),
    "exclusiveMinimum": (_keywords.exclusiveMinimum,),
    "exclusiveMaximum": (_keywords.exclusiveMaximum,),
    "multipleOf": (_keywords.multipleOf,),
    "minProperties": (_keywords.minProperties,),
    "maxProperties": (_keywords.maxProperties,),
    "propertyNames": (_keywords.propertyNames,),
    "dependentRequired": (_keywords.dependentRequired,),
    "allOf": (_keywords.allOf,),
    "anyOf": (_keywords.anyOf,),
    "oneOf": (_keywords.oneOf,),
    "not": (_keywords.not_,),
    "if": (_keywords.if_,),
    "format": (_keywords.format,),  # a no-op: validators are built without a format checker
}
_FAST_CLASSES = (dialects.Draft7, dialects.Draft201909, dialects.Draft202012)


def _is_integer(x: Any) -> bool:  # draft 6+: 1.0 is an integer, a bool is not
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


def _is_number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, numbers.Number)


_TYPES: dict[str, FastCheck] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "integer": _is_integer,
    "number": _is_number,
}


def _type_check(types: Any) -> FastCheck:
    names = [types] if isinstance(types, str) else list(types)
    if not all(isinstance(name, str) and name in _TYPES for name in names):
        raise _Unsupported("type")
    if names == ["object"]:
        return lambda x: isinstance(x, dict)
    if names == ["string"]:
        return lambda x: isinstance(x, str)
    checks = [_TYPES[name] for name in names]
    if len(checks) == 1:
        return checks[0]
    return lambda x: any(check(x) for check in checks)


def _enum_check(options: Any) -> FastCheck:
    values = list(options)
    if values and all(isinstance(value, str) for value in values):
        allowed = frozenset(values)
        return lambda x: isinstance(x, str) and x in allowed
    return lambda x: any(equal(each, x) for each in values)


def _const_check(value: Any) -> FastCheck:
    if isinstance(value, str):
        return lambda x: x == value
    return lambda x: equal(x, value)


def _multiple_of(db: Any) -> FastCheck:
    def check(x: Any) -> bool:
        if not _is_number(x):
            return True
        if isinstance(db, float):
            quotient = x / db
            try:
                failed = int(quotient) != quotient
            except OverflowError:
                failed = (Fraction(x) / Fraction(db)).denominator != 1
        else:
            failed = bool(x % db)
        return not failed

    return check


def _number_bound(limit: Any, op: str) -> FastCheck:
    if op == "min":
        return lambda x: not _is_number(x) or not x < limit
    if op == "max":
        return lambda x: not _is_number(x) or not x > limit
    if op == "xmin":
        return lambda x: not _is_number(x) or not x <= limit
    return lambda x: not _is_number(x) or not x >= limit


def _properties_check(properties: Mapping[str, Any], cls: Any) -> FastCheck:
    pairs = [(name, _compile(sub, cls)) for name, sub in properties.items()]

    def check(x: Any) -> bool:
        if not isinstance(x, dict):
            return True
        for name, sub in pairs:  # noqa: SIM110 (a loop is faster than all() over a generator)
            if name in x and not sub(x[name]):
                return False
        return True

    return check


def _additional_check(schema: Mapping[str, Any], additional: Any, cls: Any) -> FastCheck:
    known = schema.get("properties", {})
    if isinstance(additional, dict):
        sub = _compile(additional, cls)
        return lambda x: not isinstance(x, dict) or all(sub(x[k]) for k in x if k not in known)
    if additional is False or (not isinstance(additional, bool) and not additional):
        return lambda x: not isinstance(x, dict) or all(k in known for k in x)
    return lambda x: True


def _items_check(items: Any, cls: Any) -> FastCheck:
    if not isinstance(items, (dict, bool)):
        raise _Unsupported("tuple items")
    sub = _compile(items, cls)
    return lambda x: not isinstance(x, list) or all(sub(item) for item in x)


def _keyword(name: str, value: Any, schema: Mapping[str, Any], cls: Any) -> FastCheck | None:
    """The predicate of one keyword (None: it never fails)."""
    if name == "type":
        return _type_check(value)
    if name == "enum":
        return _enum_check(value)
    if name == "const":
        return _const_check(value)
    if name == "properties":
        return _properties_check(value, cls)
    if name == "required":
        required = list(value)
        return lambda x: not isinstance(x, dict) or all(k in x for k in required)
    if name == "additionalProperties":
        return _additional_check(schema, value, cls)
    if name == "items":
        return _items_check(value, cls)
    if name in {"minItems", "maxItems"}:
        low = name == "minItems"
        return lambda x: not isinstance(x, list) or (len(x) >= value if low else len(x) <= value)
    if name == "uniqueItems":
        return (lambda x: not isinstance(x, list) or bool(uniq(x))) if value else None
    if name in {"minLength", "maxLength"}:
        low = name == "minLength"
        return lambda x: not isinstance(x, str) or (len(x) >= value if low else len(x) <= value)
    if name == "pattern":
        search = regex.compile(value).search
        return lambda x: not isinstance(x, str) or search(x) is not None
    bounds = {"minimum": "min", "maximum": "max", "exclusiveMinimum": "xmin", "exclusiveMaximum": "xmax"}
    if name in bounds:
        return _number_bound(value, bounds[name])
    if name == "multipleOf":
        return _multiple_of(value)
    if name in {"minProperties", "maxProperties"}:
        low = name == "minProperties"
        return lambda x: not isinstance(x, dict) or (len(x) >= value if low else len(x) <= value)
    if name == "propertyNames":
        sub = _compile(value, cls)
        return lambda x: not isinstance(x, dict) or all(sub(k) for k in x)
    if name == "dependentRequired":
        deps = [(k, list(v)) for k, v in value.items()]
        return lambda x: (
            not isinstance(x, dict)
            or all(all(each in x for each in needed) for key, needed in deps if key in x)
        )
    if name in {"allOf", "anyOf", "oneOf"}:
        subs = [_compile(sub, cls) for sub in value]
        if name == "allOf":
            return lambda x: all(sub(x) for sub in subs)
        if name == "anyOf":
            return lambda x: any(sub(x) for sub in subs)
        return lambda x: sum(1 for sub in subs if sub(x)) == 1
    if name == "not":
        sub = _compile(value, cls)
        return lambda x: not sub(x)
    if name == "if":
        return _if_check(value, schema, cls)
    if name == "format":
        return None
    raise _Unsupported(name)


def _if_check(condition: Any, schema: Mapping[str, Any], cls: Any) -> FastCheck:
    test = _compile(condition, cls)
    then = _compile(schema["then"], cls) if "then" in schema else None
    otherwise = _compile(schema["else"], cls) if "else" in schema else None

    def check(x: Any) -> bool:
        if test(x):
            return then is None or then(x)
        return otherwise is None or otherwise(x)

    return check


def _compile(schema: Any, cls: Any) -> FastCheck:
    if schema is True:
        return lambda x: True
    if schema is False:
        return lambda x: False
    if not isinstance(schema, dict):
        raise _Unsupported("schema type")
    checks: list[FastCheck] = []
    for name, value in schema.items():
        dispatched = cls.VALIDATORS.get(name)
        if dispatched is None:
            continue  # jsonschema ignores keywords its class does not know (then/else belong to `if`)
        if name not in _EXPECTED or not any(dispatched is fn for fn in _EXPECTED[name]):
            raise _Unsupported(name)
        check = _keyword(name, value, schema, cls)
        if check is not None:
            checks.append(check)
    if not checks:
        return lambda x: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda x: first(x) and second(x)

    def every(x: Any) -> bool:
        for check in checks:  # noqa: SIM110 (a loop is faster than all() over a generator)
            if not check(x):
                return False
        return True

    return every


def compile_fast_check(schema: Any, cls: Any) -> FastCheck | None:
    """The predicate for `schema` under validator class `cls`, or None when it has no fast path."""
    if cls not in _FAST_CLASSES:
        return None  # e.g. a custom metaschema's restricted class
    try:
        return _compile(schema, cls)
    except (_Unsupported, regex.error, TypeError, ValueError, AttributeError, RecursionError):
        return None
