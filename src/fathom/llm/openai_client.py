"""Build the official ``openai`` SDK client for one configured model endpoint."""

from __future__ import annotations

import ssl
from functools import lru_cache
from typing import Any

import httpx2
import openai

from fathom.llm.model_config import ModelConfig

NO_KEY = "EMPTY"  # what vLLM and friends expect when the endpoint needs no key


@lru_cache(maxsize=1)
def ssl_context() -> ssl.SSLContext:
    """The TLS context of every model client (loading the CA bundle costs ~50 ms: built once)."""
    return ssl.create_default_context()


def make_openai_client(
    config: ModelConfig, *, http_client: Any = None, timeout: float | None = None
) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` for ``config`` with SDK retries off (Fathom retries itself, see ``retry``).

    The endpoint is admin-configured and trusted, so it does not go through the egress guard.
    ``timeout`` overrides the config's request timeout (and caps the connect timeout).
    """
    seconds = timeout or config.timeout
    return openai.AsyncOpenAI(
        api_key=config.api_key_value() or NO_KEY,
        base_url=config.base_url,
        timeout=httpx2.Timeout(seconds, connect=min(config.connect_timeout, seconds)),
        max_retries=0,
        http_client=http_client or openai.DefaultAsyncHttpxClient(verify=ssl_context()),
    )
