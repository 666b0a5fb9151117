"""Validator classes per JSON Schema dialect, and the choice of class from a schema's `$schema`.

The three classes are `jsonschema`'s draft-07 / 2019-09 / 2020-12 validators with three corrections:
- `pattern` / `patternProperties` run on the `regex` module (Unicode property escapes such as
  `\\p{Letter}`, which JSON Schema's ECMA-262 regexes allow and Python's `re` rejects);
- 2019-09 `unevaluatedProperties` counts the keys an `additionalProperties` *schema* evaluated
  (`jsonschema` treats that schema's own keys as property names);
- a custom metaschema known to the registry is followed to its base dialect, and its `$vocabulary`
  is honoured for the validation and applicator vocabularies.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

import referencing
import referencing.jsonschema
import regex
from jsonschema import Draft7Validator, Draft201909Validator, Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import create, extend

__all__ = ["SCHEMA_FORMAT_CHECKER", "validator_class_for"]


def _search(pattern: str, text: str) -> bool:
    return regex.search(pattern, text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, pattern_properties: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _is_valid(validator: Any, instance: Any, subschema: Any) -> bool:
    return next(validator.descend(instance, subschema), None) is None


def _evaluated_keys_2019(validator: Any, instance: Mapping[str, Any], schema: Any) -> set[str]:
    """Property names that some keyword of `schema` evaluated (2019-09 annotation semantics)."""
    if not isinstance(schema, Mapping):
        return set()
    keys: set[str] = set()
    for keyword in ("$ref", "$recursiveRef"):
        if keyword not in schema:
            continue
        if keyword == "$ref":
            resolved = validator._resolver.lookup(schema["$ref"])
        else:
            resolved = referencing.jsonschema.lookup_recursive_ref(validator._resolver)
        target = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
        keys |= _evaluated_keys_2019(target, instance, resolved.contents)
    properties = schema.get("properties")
    covered = set(properties) & set(instance) if isinstance(properties, Mapping) else set()
    patterns = schema.get("patternProperties")
    if isinstance(patterns, Mapping):
        covered |= {key for key in instance if any(_search(p, key) for p in patterns)}
    keys |= covered
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if keyword in schema:
            rest = [key for key in instance if key not in covered]
            keys |= {key for key in rest if _is_valid(validator, instance[key], schema[keyword])}
    dependent = schema.get("dependentSchemas")
    if isinstance(dependent, Mapping):
        for name, subschema in dependent.items():
            if name in instance:
                keys |= _evaluated_keys_2019(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, ()):
            if _is_valid(validator, instance, subschema):
                keys |= _evaluated_keys_2019(validator, instance, subschema)
    if "if" in schema:
        if _is_valid(validator, instance, schema["if"]):
            keys |= _evaluated_keys_2019(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated_keys_2019(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated_keys_2019(validator, instance, schema["else"])
    return keys


def _unevaluated_properties_2019(
    validator: Any, unevaluated: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    evaluated = _evaluated_keys_2019(validator, instance, schema)
    bad = [
        key
        for key in instance
        if key not in evaluated and not _is_valid(validator, instance[key], unevaluated)
    ]
    if bad:
        names = ", ".join(repr(key) for key in bad)
        yield ValidationError(f"Unevaluated properties are not allowed ({names} were unexpected)")


_REGEX_KEYWORDS = {"pattern": _pattern, "patternProperties": _pattern_properties}

Draft7 = extend(Draft7Validator, validators=_REGEX_KEYWORDS)
Draft201909 = extend(
    Draft201909Validator,
    validators={**_REGEX_KEYWORDS, "unevaluatedProperties": _unevaluated_properties_2019},
)
Draft202012 = extend(Draft202012Validator, validators=_REGEX_KEYWORDS)

SCHEMA_FORMAT_CHECKER = FormatChecker(formats=())
"""Checks only the `regex` format while validating a schema against its metaschema (as AJV compiles
patterns); other formats are never asserted."""


@SCHEMA_FORMAT_CHECKER.checks("regex", raises=regex.error)
def _is_regex(value: object) -> bool:
    if isinstance(value, str):
        regex.compile(value)
    return True


_STANDARD_DIALECTS = {
    "http://json-schema.org/draft-07/schema": Draft7,
    "http://json-schema.org/draft-06/schema": Draft7,
    "http://json-schema.org/draft-04/schema": Draft7,
}

_VOCABULARY_KEYWORDS: dict[str, frozenset[str]] = {
    "validation": frozenset(
        [
            "type",
            "const",
            "enum",
            "multipleOf",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "maxLength",
            "minLength",
            "pattern",
            "maxItems",
            "minItems",
            "uniqueItems",
            "maxContains",
            "minContains",
            "maxProperties",
            "minProperties",
            "required",
            "dependentRequired",
        ]
    ),
    "applicator": frozenset(
        [
            "prefixItems",
            "items",
            "additionalItems",
            "contains",
            "additionalProperties",
            "properties",
            "patternProperties",
            "dependentSchemas",
            "propertyNames",
            "if",
            "then",
            "else",
            "allOf",
            "anyOf",
            "oneOf",
            "not",
        ]
    ),
}


def _builtin_class_for(dialect: Any) -> type[Validator]:
    if isinstance(dialect, str):
        if "/draft/2020-12/" in dialect:
            return Draft202012
        if "/draft/2019-09/" in dialect:
            return Draft201909
    return Draft7


@lru_cache(maxsize=64)
def _restricted(base: Any, dropped: frozenset[str]) -> type[Validator]:
    """`base` without the keywords of vocabularies a custom metaschema leaves out."""
    keywords = {name: fn for name, fn in base.VALIDATORS.items() if name not in dropped}
    return create(
        meta_schema=base.META_SCHEMA,
        validators=keywords,
        type_checker=base.TYPE_CHECKER,
        format_checker=base.FORMAT_CHECKER,
        id_of=base.ID_OF,
    )


def _custom_metaschema_class(dialect: str, registry: referencing.Registry[Any]) -> type[Validator] | None:
    """The class for a `$schema` that names a metaschema held in `registry`, or None."""
    try:
        metaschema = registry.resolver().lookup(dialect).contents
    except referencing.exceptions.Unresolvable:
        return None
    if not isinstance(metaschema, Mapping):
        return None
    base = _builtin_class_for(metaschema.get("$schema"))
    vocabulary = metaschema.get("$vocabulary")
    if base is Draft7 or not isinstance(vocabulary, Mapping):
        return base
    listed = {str(uri).rstrip("/").rsplit("/", 1)[-1] for uri in vocabulary}
    dropped = frozenset().union(*(kw for name, kw in _VOCABULARY_KEYWORDS.items() if name not in listed))
    return _restricted(base, dropped) if dropped else base  # type: ignore[arg-type]


def validator_class_for(schema: Any, registry: referencing.Registry[Any] | None = None) -> type[Validator]:
    """The validator class for `schema` (spec §1.5.1): `$schema` containing `/draft/2020-12/` → 2020-12,
    `/draft/2019-09/` → 2019-09, otherwise draft-07. A non-standard `$schema` that `registry` holds is
    followed to the metaschema's own dialect and vocabularies."""
    dialect = schema.get("$schema") if isinstance(schema, Mapping) else None
    chosen = _builtin_class_for(dialect)
    custom = isinstance(dialect, str) and dialect.rstrip("#") not in _STANDARD_DIALECTS
    if chosen is Draft7 and custom and registry is not None:
        return _custom_metaschema_class(str(dialect), registry) or chosen
    return chosen
