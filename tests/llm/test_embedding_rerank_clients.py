"""Embedding and rerank clients round-trip through the scripted server; endpoint health check."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from fathom.llm import (
    ModelConfig,
    ModelRequestError,
    OpenAIEmbeddingModel,
    OpenAIRerankModel,
    RetryPolicy,
    check_model_endpoint,
)
from fathom.testing import ScriptedOpenAIServer, hash_embedding


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(embedding_dim=64) as running:
        yield running


def config(server: ScriptedOpenAIServer, **options: object) -> ModelConfig:
    return ModelConfig.model_validate(
        {"id": "emb", "type": "embedding", "base_url": server.base_url, **options}
    )


async def test_embeddings_are_batched_and_returned_in_input_order(server: ScriptedOpenAIServer) -> None:
    texts = [f"passage number {i} about topic {i % 3}" for i in range(7)]
    model = OpenAIEmbeddingModel(config(server, batch_size=3))
    assert model.dimensions == 0  # unknown until the endpoint answered
    result = await model.embed_with_usage(texts)
    assert [len(r["input"]) for r in server.embedding_requests] == [3, 3, 1]
    assert all(r["encoding_format"] == "float" for r in server.embedding_requests)
    assert len(result.vectors) == 7
    for text, vector in zip(texts, result.vectors, strict=True):
        assert vector == pytest.approx(hash_embedding(text, 64), abs=1e-6)
        assert math.isclose(sum(v * v for v in vector), 1.0, rel_tol=1e-6)
    assert result.input_tokens > 0 and result.model == "emb"
    assert model.dimensions == 64


async def test_embedding_dimensions_are_requested_when_configured(server: ScriptedOpenAIServer) -> None:
    model = OpenAIEmbeddingModel(config(server, dimensions=32))
    assert model.dimensions == 32
    vector = await model.embed_query("hello")
    assert len(vector) == 32
    assert server.embedding_requests[0]["dimensions"] == 32


async def test_empty_embedding_input_sends_no_request(server: ScriptedOpenAIServer) -> None:
    assert await OpenAIEmbeddingModel(config(server)).embed([]) == []
    assert server.requests == []


async def test_rerank_sends_jina_format_and_sorts_by_score(server: ScriptedOpenAIServer) -> None:
    documents = ["cats purr softly", "the weather in paris today", "paris weather forecast for tomorrow"]
    model = OpenAIRerankModel(ModelConfig(id="rr", type="rerank", base_url=server.base_url))
    result = await model.rerank("paris weather", documents, top_n=2)
    assert server.rerank_requests[0] == {
        "model": "rr",
        "query": "paris weather",
        "documents": documents,
        "top_n": 2,
    }
    assert [hit.index for hit in result.hits] == [1, 2]
    assert result.hits[0].relevance_score == pytest.approx(1.0)
    assert result.input_tokens > 0


async def test_rerank_client_retries_a_503(server: ScriptedOpenAIServer) -> None:
    calls: list[int] = []

    def flaky(query: str, document: str) -> float:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("model warming up")
        return 0.5

    server.rerank_fn = flaky

    async def no_wait(_: float) -> None:
        return None

    model = OpenAIRerankModel(
        ModelConfig(id="rr", type="rerank", base_url=server.base_url), retry=RetryPolicy(), sleep=no_wait
    )
    result = await model.rerank("q", ["a"])
    assert len(server.rerank_requests) == 2
    assert [(h.index, h.relevance_score) for h in result.hits] == [(0, 0.5)]


async def test_embedding_auth_failure_is_a_clear_error() -> None:
    with ScriptedOpenAIServer(api_key="sk-right") as server:
        model = OpenAIEmbeddingModel(config(server, api_key="sk-wrong"))
        with pytest.raises(ModelRequestError, match="HTTP 401: Incorrect API key provided"):
            await model.embed(["x"])
        good = OpenAIEmbeddingModel(config(server, api_key="sk-right"))
        assert len(await good.embed(["x"])) == 1


async def test_check_model_endpoint_reports_reachable_model(server: ScriptedOpenAIServer) -> None:
    ok, detail = await check_model_endpoint(ModelConfig(id="scripted-chat", base_url=server.base_url))
    assert ok is True
    assert detail == f"{server.base_url}: reachable, serves 'scripted-chat'"
    ok, detail = await check_model_endpoint(ModelConfig(id="other", base_url=server.base_url))
    assert ok is True and "'other' not among them ('scripted-chat', " in detail
    assert "use one of those as the model name (FATHOM_CHAT_MODEL" in detail  # what to change
    assert server.requests[0].method == "GET" and server.requests[0].path == "/v1/models"


async def test_check_model_endpoint_reports_failures() -> None:
    with ScriptedOpenAIServer(api_key="sk-right") as server:
        ok, detail = await check_model_endpoint(ModelConfig(id="m", base_url=server.base_url, api_key="nope"))
        assert ok is False and "HTTP 401" in detail
        base_url = server.base_url
    ok, detail = await check_model_endpoint(ModelConfig(id="m", base_url=base_url), timeout_s=2)
    assert ok is False and "unreachable" in detail
