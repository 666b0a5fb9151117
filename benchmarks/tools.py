"""Tool-layer benchmark: validations/s and ``run_tool`` overhead, side by side with pydantic-ai.

Run: ``.venv/bin/python benchmarks/tools.py`` (from the repository root).

- Validation: ``fathom.tools.validate_tool_runtime_params`` (cached ``jsonschema`` validator, draft-07)
  on a typical 5-property tool schema, valid and invalid inputs.
- ``run_tool`` overhead: one model tool call = parse the JSON arguments + validate + execute a no-op
  async tool, for a JSON-Schema ``ToolDefinition`` and for a ``function_tool`` (pydantic validation).
- Peer: pydantic-ai's tool execution path (``ToolManager.handle_call``: validate with pydantic-core,
  run the function, wrap the result) for the equivalent function tool, in the same process.
  pydantic-ai lives only in the benchmark's own venv (``.bench-venv``, ``pip install pydantic-ai-slim``);
  when it cannot be imported the peer rows are skipped with the reason printed.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import platform
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
    validate_tool_runtime_params,
)

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
    """Microseconds per call of ``fn()`` over ``calls`` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


async def time_async(fn: Callable[[], Awaitable[object]], calls: int) -> float:
    """Microseconds per call of ``await fn()`` over ``calls`` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        await fn()
    return (time.perf_counter() - start) / calls * 1e6


async def interleaved(
    contenders: dict[str, Callable[[], Any]], *, is_async: bool, calls: int, rounds: int = 7
) -> dict[str, float]:
    """Best (minimum) µs/call of each contender; rounds alternate between contenders so that load
    from other processes on this shared machine hits all of them alike."""
    best = {name: float("inf") for name in contenders}
    for fn in contenders.values():  # warm-up
        for _ in range(100):
            await fn() if is_async else fn()
    for _ in range(rounds):
        for name, fn in contenders.items():
            value = await time_async(fn, calls) if is_async else time_sync(fn, calls)
            best[name] = min(best[name], value)
    return best


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


async def main() -> None:
    print("# Fathom tools benchmark")
    today = datetime.date.today().isoformat()
    print(f"date: {today}  python: {platform.python_version()}  cpus: {os.cpu_count()}")
    print(f"machine: {platform.machine()} {platform.processor() or ''}".rstrip())

    assert validate_tool_runtime_params(SCHEMA, VALID).success
    assert not validate_tool_runtime_params(SCHEMA, INVALID).success
    schema_tool = ToolDefinition(name="search", description="Search", parameters=SCHEMA, execute=_noop)
    fn_tool = function_tool(search)
    call = {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": ARGS_JSON}}
    for tool in (schema_tool, fn_tool):
        result = await run_tool(call, [], [tool])
        assert result.response == "ok", result.response

    pai, where = load_pydantic_ai()
    peer: dict[str, Callable[[], Any]] = {}
    if pai is None:
        print(f"peer skipped: {where}")
    else:
        print(f"peer: pydantic-ai {getattr(pai, '__version__', '?')} ({where})")
        peer = await pydantic_ai_contenders(pai)
    print("method: best of 7 interleaved rounds (the machine is shared; the minimum is the least disturbed)")
    print()

    validations = {
        "fathom valid": lambda: validate_tool_runtime_params(SCHEMA, VALID),
        "fathom invalid": lambda: validate_tool_runtime_params(SCHEMA, INVALID),
    }
    if peer:
        validations["peer"] = peer["validate"]
    v = await interleaved(validations, is_async=False, calls=2000)
    runs: dict[str, Callable[[], Any]] = {
        "schema": lambda: run_tool(call, [], [schema_tool]),
        "function": lambda: run_tool(call, [], [fn_tool]),
    }
    if peer:
        runs["peer"] = peer["run"]
    r = await interleaved(runs, is_async=True, calls=1000)

    def rate(us: float) -> str:
        return f"{1e6 / us:,.0f}/s"

    print("| measurement | Fathom | pydantic-ai | pydantic-ai time / Fathom time |")
    print("|---|---|---|---|")
    peer_v = f"{rate(v['peer'])} (pydantic-core `validate_json`)" if peer else "skipped"
    ratio_v = f"{v['peer'] / v['fathom valid']:.3f}" if peer else "-"
    print(
        f"| validations, 5-property schema, valid input | {rate(v['fathom valid'])} | {peer_v} | {ratio_v} |"
    )
    print(f"| validations, same schema, invalid input (all 6 errors) | {rate(v['fathom invalid'])} | - | - |")
    for label, key in (
        ("JSON-Schema `ToolDefinition`", "schema"),
        ("`function_tool` (pydantic)", "function"),
    ):
        peer_r = f"{r['peer']:.1f} µs/call (`ToolManager.handle_call`)" if peer else "skipped"
        ratio_r = f"{r['peer'] / r[key]:.2f}" if peer else "-"
        print(
            f"| `run_tool` overhead, {label}: parse + validate + no-op execute "
            f"| {r[key]:.1f} µs/call | {peer_r} | {ratio_r} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
