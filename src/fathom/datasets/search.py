"""Search over the stored knowledge bases: the domain pipeline wired to the SQL indexes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fathom.datasets.embedders import EmbedderResolver
from fathom.datasets.rerankers import RerankerResolver
from fathom.knowledge.search import search_dataset_data
from fathom.knowledge.search.collection_filter import match_collections, parse_collection_filter
from fathom.knowledge.search.types import IndexingDataset, SearchDataItem, SearchDatasetDataParams
from fathom.store.knowledge import SqlChunkRepository, SqlDatasetRepository, SqlFullTextIndex, SqlVectorIndex


class ChunkStoreAdapter:
    """``ChunkStore`` over the chunk table: rows become the search's ``SearchDataItem``s."""

    def __init__(self, chunks: SqlChunkRepository) -> None:
        self.chunks = chunks

    async def get_many(self, data_ids: Sequence[str]) -> Mapping[str, SearchDataItem]:
        rows = await self.chunks.get_many(data_ids)
        return {
            data_id: SearchDataItem(
                id=row.id,
                q=row.q,
                a=row.a,
                datasetId=row.dataset_id,
                collectionId=row.collection_id,
                sourceName=row.source_name,
                sourceId=row.collection_id,
                chunkIndex=row.chunk_index,
                updateTime=row.updated_at,
                indexes=row.indexes,
                tokens=row.tokens,
            )
            for data_id, row in rows.items()
        }


class SearchModelMismatch(ValueError):
    """The datasets searched together were embedded by different models."""


class DatasetSearchService:
    def __init__(
        self,
        datasets: SqlDatasetRepository,
        chunks: SqlChunkRepository,
        full_text: SqlFullTextIndex,
        vectors: SqlVectorIndex,
        embedders: EmbedderResolver,
        reranker: Any | None = None,
        count_tokens: Any | None = None,
        rerankers: RerankerResolver | None = None,
    ) -> None:
        self.datasets = datasets
        self.chunk_store = ChunkStoreAdapter(chunks)
        self.full_text = full_text
        self.vectors = vectors
        self.embedders = embedders
        self.reranker = reranker
        self.rerankers = rerankers
        self.count_tokens = count_tokens

    async def search(
        self, team_id: str, params: SearchDatasetDataParams | Mapping[str, Any], *, keep_cut: bool = True
    ) -> Any:
        """Run the pipeline over the team's datasets (another team's dataset id is NotFound), leaving out
        their forbidden collections (``collection/update`` with ``forbid: true``) and, with
        ``collectionFilterMatch``, the collections it does not let through.

        With ``usingReRank`` the reranker is the one given at construction, else the params' ``rerankModel``
        (a model of type ``rerank``; an unknown one raises ``UnknownRerankModel``), else the default rerank
        model; with none configured the search runs without rerank and reports ``usingReRank: false``.
        ``keep_cut`` False: no ``cutRes`` (a caller showing no removed item; ``search_dataset_data``)."""
        p = (
            params
            if isinstance(params, SearchDatasetDataParams)
            else SearchDatasetDataParams.model_validate(params)
        )
        # the knowledge bases' models, forbidden collections and indexing state: one read (NotFound: not
        # the team's); the indexing state as the search starts, when an answer could miss passages
        facts = await self.datasets.search_facts(team_id, p.dataset_ids)
        models = set(facts.models.values())
        if len(models) > 1:
            raise SearchModelMismatch(
                "datasetIds: these knowledge bases use different embedding models "
                f"({', '.join(sorted(models))}); search them separately"
            )
        model_id = next(iter(models)) if models else self.embedders.default_model_id
        rule = parse_collection_filter(p.collection_filter_match)  # CollectionFilterError: bad filter
        if rule is not None:  # FastGPT's collectionFilterMatch: only the collections it lets through
            allowed = match_collections(rule, await self.datasets.collection_facts(team_id, p.dataset_ids))
            if p.collection_ids is not None:
                allowed = sorted(set(allowed) & set(p.collection_ids))
            p = p.copy_with({"collection_ids": allowed})
        forbidden = facts.forbidden
        if forbidden:  # FastGPT leaves forbidden collections out of every search
            p = p.copy_with({"forbid_collection_ids": sorted({*p.forbid_collection_ids, *forbidden})})
        response = await search_dataset_data(
            p,
            embedder=self.embedders.query_embedder(model_id),
            full_text_index=self.full_text,
            vector_index=self.vectors,
            chunk_store=self.chunk_store,
            reranker=self._reranker(p.rerank_model) if p.using_re_rank else None,
            count_tokens=self.count_tokens,
            keep_cut=keep_cut,
        )
        # knowledge bases still ingesting: an answer from them may miss passages, and says so
        response.indexing = [
            IndexingDataset(datasetId=dataset_id, name=name, pending=pending, total=total)
            for dataset_id, name, pending, total in facts.indexing
        ]
        return response

    def _reranker(self, model_id: str | None) -> Any | None:
        if self.reranker is not None:
            return self.reranker
        return self.rerankers.get(model_id) if self.rerankers is not None else None
