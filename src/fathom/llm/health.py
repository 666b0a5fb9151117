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
    # still ok: some gateways serve names they do not list; but say what it does list, and what to change
    listed = ", ".join(f"'{i}'" for i in ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    name = model.request_model
    return (
        True,
        f"{model.base_url}: reachable, but '{name}' not among them ({listed or 'none listed'}); "
        "unless this server answers unlisted names, use one of those as the model name "
        "(FATHOM_CHAT_MODEL, or the models file's api_model)",
    )
