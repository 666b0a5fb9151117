"""Usage records of the agent loop (spec §3.3.4, §3.13) and their normalisation."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

AGENT_CALL_MODULE = "account_usage:agent_call"
COMPRESS_MESSAGES_MODULE = "account_usage:compress_llm_messages"
TOOL_RESPONSE_COMPRESS_MODULE = "account_usage:tool_response_compress"


@dataclass(frozen=True, slots=True)
class AgentLoopUsage:
    """One billable usage: ``{moduleName, totalPoints, modelId?, inputTokens?, outputTokens?, pages?}``."""

    module_name: str
    total_points: float = 0.0
    model_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    pages: int | None = None

    def to_wire(self) -> dict[str, Any]:
        """FastGPT's camelCase dict, without unset optional fields."""
        wire: dict[str, Any] = {"moduleName": self.module_name, "totalPoints": self.total_points}
        for key, value in (
            ("modelId", self.model_id),
            ("inputTokens", self.input_tokens),
            ("outputTokens", self.output_tokens),
            ("pages", self.pages),
        ):
            if value is not None:
                wire[key] = value
        return wire

    @classmethod
    def coerce(cls, value: Any) -> AgentLoopUsage:
        """Accept a usage record or a camelCase / snake_case dict."""
        if isinstance(value, AgentLoopUsage):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"not a usage record: {value!r}")

        def pick(*keys: str) -> Any:
            for key in keys:
                if value.get(key) is not None:
                    return value[key]
            return None

        return cls(
            module_name=str(pick("moduleName", "module_name") or ""),
            total_points=float(pick("totalPoints", "total_points") or 0.0),
            model_id=pick("modelId", "model_id", "model"),
            input_tokens=pick("inputTokens", "input_tokens"),
            output_tokens=pick("outputTokens", "output_tokens"),
            pages=pick("pages"),
        )


def normalize_usages(usages: Iterable[Any] | None) -> list[AgentLoopUsage]:
    """Drop ``None`` entries and coerce the rest (``normalizeAgentLoopUsages``)."""
    return [AgentLoopUsage.coerce(item) for item in usages or () if item is not None]


def sum_agent_call_usages(usages: Iterable[AgentLoopUsage], model_id: str | None) -> AgentLoopUsage:
    """The read-only summary a provider reports: ``agent_call`` items summed (spec §3.4.5)."""
    calls = [u for u in usages if u.module_name == AGENT_CALL_MODULE]
    return AgentLoopUsage(
        module_name=AGENT_CALL_MODULE,
        total_points=sum(u.total_points for u in calls),
        model_id=model_id,
        input_tokens=sum(u.input_tokens or 0 for u in calls),
        output_tokens=sum(u.output_tokens or 0 for u in calls),
    )
