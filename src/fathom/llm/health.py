"""Reachability check of a configured model endpoint, for ``fathom doctor``."""

from __future__ import annotations

import openai

from fathom.llm.model_config import ModelConfig
from fathom.llm.openai_client import make_openai_client
from fathom.llm.retry import to_model_error


async def check_model_endpoint(model: ModelConfig, *, timeout_s: float = 5.0) -> tuple[bool, str]:
    """GET ``{base_url}/models`` (short timeout, no retries): ``(ok, one-line explanation)``."""
    client = make_openai_client(model, timeout=timeout_s)
    try:
        page = await client.models.list()
        ids = [item.id for item in page.data]
    except openai.OpenAIError as exc:
        return False, f"{model.base_url}: {to_model_error(exc, model.id, 1).message}"
    finally:
        await client.close()
    if model.request_model in ids:
        return True, f"{model.base_url}: reachable, serves '{model.request_model}'"
    return (
        True,
        f"{model.base_url}: reachable, {len(ids)} model(s) listed, '{model.request_model}' not among them",
    )
