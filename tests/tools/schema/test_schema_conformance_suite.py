"""The official JSON-Schema-Test-Suite, required tests of draft7 / 2019-09 / 2020-12, through
`validate_tool_input_value`. Remote `$ref`s resolve from the suite's `remotes/` folder via an offline
registry (nothing is fetched). Only tests that assert `format` may fail: formats are deliberately not
asserted (FastGPT's AJV runs with `validateFormats: false`).

The fast path (a predicate compiled per schema, used to accept valid inputs without `jsonschema`) is held
to the full validator's verdict on every test of the suite whose schema it covers, valid and invalid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import referencing
import referencing.jsonschema

from fathom.tools.schema import SchemaValidatorCache, validate_tool_input_value
from fathom.tools.schema.validation import _offline_registry

SUITE = Path(__file__).parents[3] / ".." / "shared" / "datasets" / "json-schema-test-suite"

DRAFTS: dict[str, tuple[str, referencing.Specification[Any]]] = {
    "draft7": ("http://json-schema.org/draft-07/schema#", referencing.jsonschema.DRAFT7),
    "draft2019-09": ("https://json-schema.org/draft/2019-09/schema", referencing.jsonschema.DRAFT201909),
    "draft2020-12": ("https://json-schema.org/draft/2020-12/schema", referencing.jsonschema.DRAFT202012),
}
REMOTE_FOLDER_SPECS = {
    "draft4": referencing.jsonschema.DRAFT4,
    "draft6": referencing.jsonschema.DRAFT6,
    "draft7": referencing.jsonschema.DRAFT7,
    "draft2019-09": referencing.jsonschema.DRAFT201909,
    "draft2020-12": referencing.jsonschema.DRAFT202012,
}


def _remote_registry(default: referencing.Specification[Any]) -> referencing.Registry[Any]:
    """Every file of `remotes/` at `http://localhost:1234/<path>`, as the suite's README prescribes."""
    registry = _offline_registry()
    remotes = SUITE / "remotes"
    resources = []
    for path in sorted(remotes.rglob("*.json")):
        relative = path.relative_to(remotes).as_posix()
        spec = REMOTE_FOLDER_SPECS.get(relative.split("/", 1)[0], default)
        contents = json.loads(path.read_text(encoding="utf-8"))
        resource = referencing.Resource.from_contents(contents, default_specification=spec)
        resources.append((f"http://localhost:1234/{relative}", resource))
    return registry.with_resources(resources)


def _asserts_format(group: dict[str, Any], case: dict[str, Any]) -> bool:
    """A test that only fails because `format` is not asserted: it expects rejection of a schema using
    `format`. (None of the required tests is such a test today; the count is printed.)"""
    return not case["valid"] and '"format"' in json.dumps(group["schema"])


def _run_draft(draft: str) -> tuple[int, int, list[str]]:
    dialect, spec = DRAFTS[draft]
    cache = SchemaValidatorCache(registry=_remote_registry(spec))
    passed = skipped_format = 0
    failures: list[str] = []
    for path in sorted((SUITE / "tests" / draft).glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            schema = group["schema"]
            if isinstance(schema, dict) and "$schema" not in schema:
                schema = {"$schema": dialect, **schema}
            for case in group["tests"]:
                result = validate_tool_input_value(schema, case["data"], cache=cache)
                if result.success == case["valid"]:
                    passed += 1
                elif _asserts_format(group, case):
                    skipped_format += 1
                else:
                    failures.append(
                        f"{path.name} | {group['description']} | {case['description']} "
                        f"(expected valid={case['valid']}, errors={result.errors})"
                    )
    return passed, skipped_format, failures


def _fast_path_disagreements(draft: str) -> tuple[int, int, list[str]]:
    """(cases the fast path answered, schemas it covered, cases where it differs from the full validator),
    over the required and the optional tests (bignum, float overflow, ECMA and non-BMP regexes, formats)."""
    dialect, spec = DRAFTS[draft]
    cache = SchemaValidatorCache(registry=_remote_registry(spec))
    answered = covered = 0
    disagreements: list[str] = []
    for path in sorted((SUITE / "tests" / draft).rglob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            schema = group["schema"]
            if isinstance(schema, dict) and "$schema" not in schema:
                schema = {"$schema": dialect, **schema}
            compiled = cache.compile(schema)
            if compiled.fast is None or compiled.validator is None:
                continue
            covered += 1
            for case in group["tests"]:
                fast = compiled.fast(case["data"])
                full = compiled.validator.is_valid(case["data"])
                answered += 1
                if fast != full:
                    where = f"{path.name} | {group['description']} | {case['description']}"
                    disagreements.append(f"{where} (fast={fast}, full={full})")
    return answered, covered, disagreements


@pytest.mark.parametrize("draft", list(DRAFTS))
def test_fast_path_verdicts_equal_the_full_validator_on_the_suite(draft: str) -> None:
    if not SUITE.is_dir():
        pytest.skip(f"JSON-Schema-Test-Suite not found at {SUITE}")
    answered, covered, disagreements = _fast_path_disagreements(draft)
    print(f"\n{draft}: the fast path covers {covered} schemas, {answered} cases")
    assert answered > 1000  # most of the suite's schemas use only the keywords it mirrors
    assert disagreements == []


@pytest.mark.parametrize("draft", list(DRAFTS))
def test_required_suite_tests_pass_except_format_assertions(draft: str) -> None:
    if not SUITE.is_dir():
        pytest.skip(f"JSON-Schema-Test-Suite not found at {SUITE}")
    passed, skipped_format, failures = _run_draft(draft)
    total = passed + skipped_format + len(failures)
    print(f"\n{draft}: {passed}/{total} required tests pass; {skipped_format} format assertions not enforced")
    assert total > 500
    assert failures == []
