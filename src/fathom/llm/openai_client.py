"""Build the official ``openai`` SDK client for one configured model endpoint."""

from __future__ import annotations

from typing import Any

import httpx2
import openai

from fathom.llm.model_config import ModelConfig

NO_KEY = "EMPTY"  # what vLLM and friends expect when the endpoint needs no key


def make_openai_client(
    config: ModelConfig, *, http_client: Any = None, timeout: float | None = None
) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` for ``config`` with SDK retries off (Fathom retries itself, see ``retry``).

    The endpoint is admin-configured and trusted, so it does not go through the egress guard.
    """
    return openai.AsyncOpenAI(
        api_key=config.api_key_value() or NO_KEY,
        base_url=config.base_url,
        timeout=httpx2.Timeout(
            timeout or config.timeout, connect=min(config.connect_timeout, timeout or 1e9)
        ),
        max_retries=0,
        http_client=http_client,
    )
