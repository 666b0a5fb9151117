"""Bridge to :mod:`fathom.tools.schema` validation, with a cached-jsonschema fallback while it lands."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

__all__ = ["runtime_params_errors"]

_validate: Any
try:
    from fathom.tools.schema import validate_tool_runtime_params as _validate
except ImportError:  # pragma: no cover - only before the schema package exists
    _validate = None


@lru_cache(maxsize=1024)
def _fallback_validator(schema_json: str) -> Any:
    import jsonschema

    schema = json.loads(schema_json)
    uri = str(schema.get("$schema", "")) if isinstance(schema, dict) else ""
    if "/draft/2020-12/" in uri:
        cls: Any = jsonschema.Draft202012Validator
    elif "/draft/2019-09/" in uri:
        cls = jsonschema.Draft201909Validator
    else:
        cls = jsonschema.Draft7Validator
    return cls(schema)


def runtime_params_errors(schema: Mapping[str, Any], params: Any) -> list[str]:
    """Errors of ``params`` against the full raw ``schema`` (empty list when valid)."""
    if _validate is not None:
        result = _validate(schema, params)
        return list(result.errors)
    try:
        validator = _fallback_validator(json.dumps(schema, sort_keys=True))
        errors = []
        for err in validator.iter_errors(params):
            path = "".join(f"/{p}" for p in err.absolute_path) or "/"
            errors.append(f"{path} {err.message}")
        return errors
    except Exception as exc:  # malformed schema
        return [str(exc)]
