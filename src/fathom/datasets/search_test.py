"""FastGPT's search test of one knowledge base: the query (and, when asked, its rewrites by a chat
model: query extension) searched with the knobs the caller sent."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fathom.datasets.embedders import EmbedderResolver
from fathom.datasets.errors import InvalidDatasetRequest
from fathom.datasets.search import DatasetSearchService
from fathom.knowledge.search.collection_filter import CollectionFilterError, parse_collection_filter
from fathom.knowledge.search.query_extension import QueryExtension, extend_search_query
from fathom.knowledge.search.types import SearchDatasetDataParams, SearchDatasetDataResponse
from fathom.llm.errors import ModelRequestError
from fathom.store.protocols import DatasetRecord

log = logging.getLogger("fathom.datasets.search_test")

SEARCH_LIMIT_MAX = 20000


@dataclass(frozen=True)
class SearchTestAsk:
    """A search test as asked (None: FastGPT's default). ``extension_model`` "" or None: the default chat
    model; ``collection_filter``: FastGPT's ``collectionFilterMatch`` (an object or its JSON text)."""

    text: str
    limit: int | None = None
    similarity: float | None = None
    search_mode: str | None = None
    embedding_weight: float | None = None
    fusion: str | None = None
    using_rerank: bool | None = None
    rerank_model: str | None = None
    rerank_weight: float | None = None
    collection_filter: dict[str, Any] | str | None = None
    extension: bool | None = None
    extension_model: str | None = None
    extension_background: str | None = None


@dataclass(frozen=True)
class SearchTestOutcome:
    """The search's answer, how long the search took, and the query extension when it ran."""

    response: SearchDatasetDataResponse
    seconds: float
    extension: QueryExtension | None


class SearchTester:
    """Runs search tests; ``chat_models`` gives the chat model of an id ("" the default)."""

    def __init__(
        self, search: DatasetSearchService, embedders: EmbedderResolver, chat_models: Callable[[str], Any]
    ) -> None:
        self.search = search
        self.embedders = embedders
        self.chat_models = chat_models

    async def run(self, team_id: str, dataset: DatasetRecord, ask: SearchTestAsk) -> SearchTestOutcome:
        """Search ``dataset``; a bad ``collectionFilterMatch`` or extension model is refused before
        anything runs, an unknown rerank model raises ``UnknownRerankModel``."""
        try:
            parse_collection_filter(ask.collection_filter)
        except CollectionFilterError as exc:
            raise InvalidDatasetRequest(str(exc)) from None
        extension = await self._query_extension(ask, dataset.vector_model)
        params = SearchDatasetDataParams(
            queries=extension.queries.search_queries if extension else [ask.text],
            reRankQuery=extension.queries.re_rank_query if extension else ask.text,
            datasetIds=[dataset.id],
            similarity=ask.similarity or 0,
            limit=min(5000 if ask.limit is None else ask.limit, SEARCH_LIMIT_MAX),
            searchMode=ask.search_mode or "embedding",
            embeddingWeight=0.5 if ask.embedding_weight is None else ask.embedding_weight,
            fusion=ask.fusion,
            usingReRank=bool(ask.using_rerank),
            rerankWeight=0.5 if ask.rerank_weight is None else ask.rerank_weight,
            rerankModel=ask.rerank_model,
            collectionFilterMatch=ask.collection_filter,
        )
        started = time.perf_counter()
        response = await self.search.search(team_id, params)
        return SearchTestOutcome(response, time.perf_counter() - started, extension)

    async def _query_extension(self, ask: SearchTestAsk, vector_model: str) -> QueryExtension | None:
        """``datasetSearchUsingExtensionQuery``: rewrites of the text by ``datasetSearchExtensionModel``
        (default: the default chat model), up to 3 kept by lazy greedy. A model that fails leaves the
        plain query."""
        if not ask.extension:
            return None
        model_id = ask.extension_model or ""
        try:
            model = self.chat_models(model_id)
        except (LookupError, RuntimeError) as exc:
            raise InvalidDatasetRequest(f"datasetSearchExtensionModel: {exc}") from None
        embedder = self.embedders.query_embedder(vector_model)
        try:
            return await extend_search_query(
                ask.text, model, embedder, background=ask.extension_background or ""
            )
        except ModelRequestError as exc:
            log.warning(
                "query extension with %s failed, searching the plain query: %s", model_id or "default", exc
            )
            return None
