"""The one public entry ``run_agent_loop`` and the provider registry (spec §3.4.4, §3.4.6)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping

from fathom.agent.messages import plain_messages
from fathom.agent.types import AgentLoopInput, AgentLoopResult, AgentLoopRuntime
from fathom.agent.usage import AgentLoopUsage, normalize_usages
from fathom.tools import error_text
from fathom.tools.contract import maybe_await

log = logging.getLogger(__name__)

AgentLoopProvider = Callable[[AgentLoopInput, AgentLoopRuntime], Awaitable[AgentLoopResult]]
DEFAULT_PROVIDER = "fastAgent"

_PROVIDERS: dict[str, AgentLoopProvider] = {}
_GAPS: dict[str, dict[str, str]] = {}


class UnknownProviderError(ValueError):
    """``Unknown agent loop provider: {name}``."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Unknown agent loop provider: {name}")
        self.name = name


def register_provider(
    name: str, provider: AgentLoopProvider, *, gaps: Mapping[str, str] | None = None
) -> None:
    """Register (or replace) a provider under ``name``. ``gaps`` names the parts of the provider
    contract it cannot honour (capability → reason); the contract suite reads it."""
    if not name:
        raise ValueError("provider name must be non-empty")
    _PROVIDERS[name] = provider
    _GAPS[name] = dict(gaps or {})


def provider_gaps(name: str) -> dict[str, str]:
    """The declared contract gaps of a registered provider (empty for a complete provider)."""
    get_provider(name)
    return dict(_GAPS.get(name, {}))


def get_provider(name: str | None) -> AgentLoopProvider:
    """The provider registered as ``name`` (default ``fastAgent``); no aliases."""
    key = DEFAULT_PROVIDER if name is None else name
    try:
        return _PROVIDERS[key]
    except KeyError:
        raise UnknownProviderError(key) from None


def registered_providers() -> list[str]:
    """Names of the registered providers, in registration order."""
    return list(_PROVIDERS)


async def run_agent_loop(
    provider: str | None, input: AgentLoopInput, runtime: AgentLoopRuntime
) -> AgentLoopResult:
    """Run ``input`` with the named provider. Usages pushed through ``runtime.usage_push`` are
    forwarded and collected; ``result.usages`` is that list when non-empty. A provider exception
    becomes an ``error`` result keeping the input messages, plan and provider state."""
    implementation = get_provider(provider)
    collected: list[AgentLoopUsage] = []
    outer_push = runtime.usage_push

    async def push(usages: list[AgentLoopUsage]) -> None:
        normalized = normalize_usages(usages)
        if not normalized:
            return
        collected.extend(normalized)
        if outer_push is not None:
            await maybe_await(outer_push(normalized))

    wrapped = dataclasses.replace(runtime, usage_push=push)
    try:
        result = await implementation(input, wrapped)
    except Exception as exc:
        log.warning("agent loop provider %s failed: %s", provider or DEFAULT_PROVIDER, exc, exc_info=True)
        return AgentLoopResult(
            status="error",
            error=error_text(exc),
            active_plan=input.active_plan,
            provider_state=input.provider_state,
            complete_messages=plain_messages(input.messages),
            assistant_messages=[],
            request_ids=[],
            finish_reason="error",
            usages=list(collected),
        )
    if collected:
        result.usages = list(collected)
    else:
        result.usages = normalize_usages(result.usages)
    return result


def _install_builtin() -> None:
    from fathom.agent.fast_agent import run_fast_agent
    from fathom.agent.pydantic_ai_provider import PYDANTIC_AI_GAPS, PYDANTIC_AI_PROVIDER, run_pydantic_ai

    register_provider(DEFAULT_PROVIDER, run_fast_agent)
    register_provider(PYDANTIC_AI_PROVIDER, run_pydantic_ai, gaps=PYDANTIC_AI_GAPS)


_install_builtin()

__all__ = [
    "DEFAULT_PROVIDER",
    "AgentLoopProvider",
    "UnknownProviderError",
    "get_provider",
    "provider_gaps",
    "register_provider",
    "registered_providers",
    "run_agent_loop",
]
