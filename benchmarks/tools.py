"""Tool-layer benchmark: validations per CPU-second and ``run_tool`` overhead, side by side with pydantic-ai.

Run: ``.venv/bin/python benchmarks/tools.py [--rounds 5]`` (from the repository root).

- Validation on a typical 5-property tool schema, valid and invalid inputs:
  - *before*: the path every call took until issue 17 (the schema's canonical JSON built as the cache key,
    then the full ``jsonschema`` validator, AJV-style messages on failure); reproduced here from the same
    cache's full validator;
  - *now*: what a ``ToolDefinition`` runs per call (the schema compiled once, the fast path for a valid
    input, the full validator for an invalid one: every error collected).
- ``run_tool`` overhead: one model tool call = parse the JSON arguments + validate + execute a no-op
  async tool, for a JSON-Schema ``ToolDefinition`` and for a ``function_tool`` (pydantic validation).
- Peer: pydantic-ai's tool execution path (``ToolManager.handle_call``: validate with pydantic-core,
  run the function, wrap the result) for the equivalent function tool, in the same process.
  pydantic-ai lives only in the benchmark's own venv (``.bench-venv``, ``pip install pydantic-ai-slim``);
  when it cannot be imported the peer rows are skipped with the reason printed.

Method (the machine is shared): CPU time of this process (``time.process_time``), contenders interleaved
round by round with the order rotated, at least 3 rounds; each figure is min / median / max over the
rounds, and each ratio is taken within a round.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from pydantic import Field  # noqa: E402

from fathom.tools import (  # noqa: E402
    ToolContext,
    ToolDefinition,
    function_tool,
    run_tool,
)
from fathom.tools.schema import SchemaValidatorCache  # noqa: E402
from fathom.tools.schema.validation import _validate_tool_runtime_params  # noqa: E402
from fathom.tools.schema.validation_messages import format_errors  # noqa: E402

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "description": "What to search for"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        "mode": {"type": "string", "enum": ["fast", "deep"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "strict": {"type": "boolean"},
    },
    "required": ["query", "limit"],
    "additionalProperties": False,
}
VALID = {
    "query": "reciprocal rank fusion",
    "limit": 10,
    "mode": "deep",
    "tags": ["rag", "search"],
    "strict": True,
}
INVALID = {"query": "", "limit": 0, "mode": "slow", "tags": [1], "strict": "yes", "extra": 1}
ARGS_JSON = json.dumps(VALID)


async def search(
    query: Annotated[str, Field(min_length=1)],
    limit: Annotated[int, Field(ge=1, le=100)],
    mode: Literal["fast", "deep"] = "fast",
    tags: list[str] | None = None,
    strict: bool = False,
) -> str:
    """Search the knowledge base (no-op for the benchmark)."""
    return "ok"


async def _noop(ctx: ToolContext) -> str:
    return "ok"


def time_sync(fn: Callable[[], object], calls: int) -> float:
    """CPU microseconds per call of ``fn()`` over ``calls`` calls."""
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls * 1e6


async def time_async(fn: Callable[[], Awaitable[object]], calls: int) -> float:
    """CPU microseconds per call of ``await fn()`` over ``calls`` calls."""
    start = time.process_time()
    for _ in range(calls):
        await fn()
    return (time.process_time() - start) / calls * 1e6


async def interleaved(
    contenders: dict[str, Callable[[], Any]], *, is_async: bool, calls: int, rounds: int
) -> dict[str, list[float]]:
    """µs/call of each contender per round; the order rotates each round so that load from other
    processes on this shared machine hits all of them alike."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    names = list(contenders)
    for fn in contenders.values():  # warm-up
        for _ in range(100):
            await fn() if is_async else fn()
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            fn = contenders[name]
            value = await time_async(fn, calls) if is_async else time_sync(fn, calls)
            samples[name].append(value)
    return samples


def spread(values: list[float], fmt: str = "{:.1f}") -> str:
    """min / median / max."""
    ordered = sorted(values)
    return " / ".join(fmt.format(v) for v in (ordered[0], statistics.median(ordered), ordered[-1]))


def ratios(numerator: list[float], denominator: list[float]) -> list[float]:
    return [a / b for a, b in zip(numerator, denominator, strict=True)]


def load_pydantic_ai() -> tuple[Any, str]:
    """Import pydantic-ai from this interpreter or from ``.bench-venv``; (module | None, reason)."""
    try:
        import pydantic_ai

        return pydantic_ai, "current environment"
    except ImportError:
        pass
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = ROOT / ".bench-venv" / "lib" / version / "site-packages"
    if not site.is_dir():
        return None, f"pydantic-ai not installed (no {site.relative_to(ROOT)}; see the module docstring)"
    sys.path.append(str(site))
    try:
        import pydantic_ai

        return pydantic_ai, str(site.relative_to(ROOT))
    except Exception as exc:  # a broken or incompatible install
        return None, f"pydantic-ai could not be imported from {site.relative_to(ROOT)}: {exc}"


async def pydantic_ai_contenders(pai: Any) -> dict[str, Callable[[], Any]]:
    """pydantic-ai's validator and its tool execution path for the equivalent function tool."""
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.usage import RunUsage

    toolset = FunctionToolset([search])
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    manager = await ToolManager(toolset).for_run_step(ctx)
    part = ToolCallPart(tool_name="search", args=ARGS_JSON, tool_call_id="call_1")
    assert await manager.handle_call(part) == "ok"
    validator = manager.tools["search"].args_validator  # pydantic-core SchemaValidator
    return {
        "validate": lambda: validator.validate_json(ARGS_JSON),
        "run": lambda: manager.handle_call(part),
    }


def before_issue_17(cache: SchemaValidatorCache) -> Callable[[Any], list[str]]:
    """The per-call path before the fast path: canonical-JSON cache key, then the full validator."""

    def validate(instance: Any) -> list[str]:
        key = json.dumps(SCHEMA, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert key
        validator = cache.get(SCHEMA)
        assert not isinstance(validator, str)
        errors = list(validator.iter_errors(instance))
        return format_errors(errors) if errors else []

    return validate


async def main(rounds: int) -> None:
    print("# Fathom tools benchmark")
    today = datetime.date.today().isoformat()
    print(f"date: {today}  python: {platform.python_version()}  cpus: {os.cpu_count()}")
    print(f"machine: {platform.machine()} {platform.processor() or ''}".rstrip())
    print(f"load average: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")

    assert _validate_tool_runtime_params(SCHEMA, VALID).success
    assert not _validate_tool_runtime_params(SCHEMA, INVALID).success
    schema_tool = ToolDefinition(name="search", description="Search", parameters=SCHEMA, execute=_noop)
    fn_tool = function_tool(search)
    call = {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": ARGS_JSON}}
    for tool in (schema_tool, fn_tool):
        result = await run_tool(call, [], [tool])
        assert result.response == "ok", result.response
    before = before_issue_17(SchemaValidatorCache())
    assert before(VALID) == [] and before(INVALID) == schema_tool.parse_value(INVALID).error_message.split(
        ": ", 1
    )[1].split("; ")

    pai, where = load_pydantic_ai()
    peer: dict[str, Callable[[], Any]] = {}
    if pai is None:
        print(f"peer skipped: {where}")
    else:
        print(f"peer: pydantic-ai {getattr(pai, '__version__', '?')} ({where})")
        peer = await pydantic_ai_contenders(pai)
    print(
        f"method: CPU time of this process, {rounds} interleaved rounds (order rotated); "
        "figures are min / median / max over the rounds, ratios taken within each round"
    )
    print()

    validations = {
        "before valid": lambda: before(VALID),
        "now valid": lambda: schema_tool.parse_value(VALID),
        "before invalid": lambda: before(INVALID),
        "now invalid": lambda: schema_tool.parse_value(INVALID),
    }
    if peer:
        validations["peer"] = peer["validate"]
    v = await interleaved(validations, is_async=False, calls=2000, rounds=rounds)
    runs: dict[str, Callable[[], Any]] = {
        "schema": lambda: run_tool(call, [], [schema_tool]),
        "function": lambda: run_tool(call, [], [fn_tool]),
    }
    if peer:
        runs["peer"] = peer["run"]
    r = await interleaved(runs, is_async=True, calls=1000, rounds=rounds)

    print("| measurement (CPU µs per call, min / median / max) | before | now | before / now |")
    print("|---|---|---|---|")
    for label, key in (("valid input", "valid"), ("invalid input (all 6 errors collected)", "invalid")):
        b, n = v[f"before {key}"], v[f"now {key}"]
        print(
            f"| validation, 5-property schema, {label} | {spread(b)} | {spread(n)} "
            f"| {spread(ratios(b, n), '{:.2f}')} |"
        )
    print()
    print(
        "| measurement (CPU µs per call, min / median / max) | Fathom | pydantic-ai | pydantic-ai / Fathom |"
    )
    print("|---|---|---|---|")
    if peer:
        print(
            "| validation, valid input (Fathom now; pydantic-core `validate_json`) "
            f"| {spread(v['now valid'])} "
            f"| {spread(v['peer'], '{:.2f}')} | {spread(ratios(v['peer'], v['now valid']), '{:.3f}')} |"
        )
    for label, key in (
        ("JSON-Schema `ToolDefinition`", "schema"),
        ("`function_tool` (pydantic)", "function"),
    ):
        peer_r = f"{spread(r['peer'])} (`ToolManager.handle_call`)" if peer else "skipped"
        ratio_r = spread(ratios(r["peer"], r[key]), "{:.2f}") if peer else "-"
        print(
            f"| `run_tool` overhead, {label}: parse + validate + no-op execute "
            f"| {spread(r[key])} | {peer_r} | {ratio_r} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (at least 3)")
    args = parser.parse_args()
    asyncio.run(main(max(3, args.rounds)))
