"""JSON Schema validation of tool inputs, with FastGPT's AJV semantics (spec §1.5).

- Dialect from `$schema`: contains `/draft/2020-12/` → 2020-12, `/draft/2019-09/` → 2019-09, else draft-07
  (note: `jsonschema`'s own default would be 2020-12).
- All errors collected; `format` is never asserted; unknown keywords are ignored.
- Compiled validators are cached by the canonical JSON of the schema (bounded LRU, per cache object);
  callers that validate many inputs against one schema hold a `CompiledSchema` (`cache.compile(schema)`)
  and skip even that lookup.
- Valid inputs take a fast path: a predicate compiled once per schema (`fast_path.py`) answers "valid"
  for the common keywords; only an input it rejects (or a schema it does not cover) runs the full
  `jsonschema` validator, which gives the verdict and collects every error.
- `$ref`s are resolved only inside the schema and the cache's `referencing.Registry`; nothing is
  fetched over the network. A `$ref` that cannot be resolved, a malformed schema, or a schema that is
  not JSON gives a failed `ValidationResult` naming the problem, never an exception.
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from jsonschema_specifications import REGISTRY as _METASCHEMAS

from fathom.tools.schema.dialects import SCHEMA_FORMAT_CHECKER, validator_class_for
from fathom.tools.schema.fast_path import FastCheck, compile_fast_check
from fathom.tools.schema.validation_messages import format_errors, json_pointer

__all__ = [
    "CompiledSchema",
    "SchemaValidatorCache",
    "ToolInputValidationError",
    "ValidationResult",
    "assert_tool_runtime_params",
    "default_validator_cache",
    "validate_tool_input_value",
    "validator_class_for",
]

_DEFAULT_CACHE_SIZE = 1024


@dataclass(slots=True)
class ValidationResult:
    """Outcome of a validation: `success`, and the error strings when it failed."""

    success: bool
    errors: list[str] = field(default_factory=list)


class ToolInputValidationError(ValueError):
    """Raised by `assert_tool_runtime_params`: `Tool input validation failed: {errors joined by '; '}`."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = list(errors)
        super().__init__(f"Tool input validation failed: {'; '.join(self.errors)}")


def _refuse_retrieval(uri: str) -> referencing.Resource[Any]:
    """Retrieval hook that never touches the network: every unknown URI is unresolvable."""
    raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]


def _offline_registry(
    resources: Mapping[str, Any] | None = None,
    default_specification: referencing.Specification[Any] = referencing.jsonschema.DRAFT7,
) -> referencing.Registry[Any]:
    """A registry of known schemas (URI → schema contents) that refuses to fetch anything else."""
    registry: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
    pairs = [
        (uri, referencing.Resource.from_contents(contents, default_specification=default_specification))
        for uri, contents in (resources or {}).items()
    ]
    return registry.with_resources(pairs) if pairs else registry


class _CompileError(Exception):
    """A schema that cannot be compiled; the message is the user-facing error."""


def _check_refs(resolver: referencing._core.Resolver[Any], resource: referencing.Resource[Any]) -> None:
    """Resolve every `$ref` of the schema now, so a missing target fails at compile time as in AJV."""
    contents = resource.contents
    if isinstance(contents, Mapping):
        ref = contents.get("$ref")
        if isinstance(ref, str):
            try:
                resolver.lookup(ref)
            except referencing.exceptions.Unresolvable as exc:
                raise _CompileError(f"can't resolve reference {ref}") from exc
    for subresource in resource.subresources():
        _check_refs(resolver.in_subresource(subresource), subresource)


def _compile(schema: Any, registry: referencing.Registry[Any]) -> Validator:
    if not isinstance(schema, (Mapping, bool)):
        raise _CompileError("schema must be object or boolean")
    cls = validator_class_for(schema, registry)
    meta_cls = validator_for(cls.META_SCHEMA, default=cls)
    worst = best_match(meta_cls(cls.META_SCHEMA, format_checker=SCHEMA_FORMAT_CHECKER).iter_errors(schema))
    if worst is not None:
        where = json_pointer(worst.absolute_path) or "/"
        raise _CompileError(f"schema is invalid: {where} {worst.message}")
    validator = cls(schema, registry=registry)
    if isinstance(schema, Mapping):
        specification = referencing.jsonschema.specification_with(str(cls.META_SCHEMA.get("$id", "")))
        root = specification.create_resource(schema)
        combined = _METASCHEMAS.combine(registry)
        try:
            _check_refs(combined.resolver_with_root(root), root)
        except _CompileError:
            raise
        except Exception as exc:  # a broken $id or similar: report, never crash the caller
            raise _CompileError(f"schema is invalid: {exc}") from exc
    return validator


class CompiledSchema:
    """One schema, compiled once: the full validator (or the compile error) and, where the schema's
    keywords allow, the fast predicate for valid inputs. ``validate`` never raises."""

    __slots__ = ("error", "fast", "validator")

    def __init__(self, validator: Validator | None, error: str | None, fast: FastCheck | None) -> None:
        self.validator = validator
        self.error = error
        self.fast = fast

    def validate(self, instance: Any) -> ValidationResult:
        """Validate `instance`; every failure is a result, never an exception."""
        fast = self.fast
        if fast is not None:
            try:
                if fast(instance):
                    return ValidationResult(success=True, errors=[])
            except Exception:  # e.g. RecursionError: let the full validator decide
                pass
        validator = self.validator
        if validator is None:
            return ValidationResult(success=False, errors=[self.error or "schema could not be compiled"])
        try:
            errors = list(validator.iter_errors(instance))
        except referencing.exceptions.Unresolvable as exc:
            return ValidationResult(success=False, errors=[f"can't resolve reference {exc}"])
        except RecursionError:
            return ValidationResult(success=False, errors=["schema recursion is too deep"])
        except Exception as exc:  # defensive: e.g. a pattern Python's `re` cannot run
            return ValidationResult(success=False, errors=[f"validation failed: {exc}"])
        if not errors:
            return ValidationResult(success=True, errors=[])
        return ValidationResult(success=False, errors=format_errors(errors))


class SchemaValidatorCache:
    """Compiled validators keyed by the schema's canonical JSON, resolving `$ref`s through `registry`."""

    def __init__(self, registry: referencing.Registry[Any] | None = None, maxsize: int = _DEFAULT_CACHE_SIZE):
        self._registry = registry if registry is not None else _offline_registry()
        self._maxsize = maxsize
        self._entries: OrderedDict[str, CompiledSchema] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every compiled validator."""
        with self._lock:
            self._entries.clear()

    def compile(self, schema: Any) -> CompiledSchema:
        """The compiled schema (full validator or compile error, plus the fast path), cached."""
        try:
            key = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            return CompiledSchema(None, f"schema is not JSON: {exc}", None)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry
        entry = self._build(schema)
        with self._lock:
            self._entries[key] = entry
            if len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)
        return entry

    def _build(self, schema: Any) -> CompiledSchema:
        private = copy.deepcopy(schema)  # the caller may change its dict later; ours stays as compiled
        try:
            validator = _compile(private, self._registry)
        except _CompileError as exc:
            return CompiledSchema(None, str(exc), None)
        except Exception as exc:  # defensive: a validator bug must not reach the caller
            return CompiledSchema(None, f"schema could not be compiled: {exc}", None)
        return CompiledSchema(validator, None, compile_fast_check(private, type(validator)))

    def get(self, schema: Any) -> Validator | str:
        """The compiled full validator for `schema`, or the compile error message (also cached)."""
        compiled = self.compile(schema)
        if compiled.validator is None:
            return compiled.error or "schema could not be compiled"
        return compiled.validator

    def validate(self, schema: Any, instance: Any) -> ValidationResult:
        """Validate `instance` against `schema`; every failure is a result, never an exception."""
        return self.compile(schema).validate(instance)


default_validator_cache = SchemaValidatorCache()
"""The process-wide cache used when no `cache=` is passed."""


def validate_tool_input_value(
    schema: Any, value: Any, *, cache: SchemaValidatorCache | None = None
) -> ValidationResult:
    """Validate one manual value against its raw JSON-Schema property; no schema (`None`) accepts all."""
    if schema is None:
        return ValidationResult(success=True, errors=[])
    return (cache if cache is not None else default_validator_cache).validate(schema, value)


def _validate_tool_runtime_params(
    json_schema: Any, params: Any, *, cache: SchemaValidatorCache | None = None
) -> ValidationResult:
    """Validate the whole parameter object against the tool's full raw schema (no pre-filtering)."""
    if json_schema is None:
        return ValidationResult(success=True, errors=[])
    return (cache if cache is not None else default_validator_cache).validate(json_schema, params)


def assert_tool_runtime_params(
    json_schema: Any, params: Any, *, cache: SchemaValidatorCache | None = None
) -> None:
    """Like `validate_tool_runtime_params`, raising `ToolInputValidationError` on failure."""
    result = _validate_tool_runtime_params(json_schema, params, cache=cache)
    if not result.success:
        raise ToolInputValidationError(result.errors)
