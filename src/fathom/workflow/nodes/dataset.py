"""``datasetSearchNode`` (knowledge-base search through ``services.dataset_search``) and
``datasetConcatNode`` (weighted-RRF merge of several quote lists within a token budget)."""

from __future__ import annotations

from typing import Any

from fathom.knowledge.search import (
    SearchDataItem,
    SearchDatasetDataParams,
    dataset_search_result_concat,
    filter_search_results_by_max_chars,
)
from fathom.knowledge.search.collection_filter import CollectionFilterError, parse_collection_filter
from fathom.knowledge.search.types import items_to_wire
from fathom.llm import count_tokens
from fathom.workflow.constants import FlowNodeType, NodeInputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, ServiceUnavailableError, register_node
from fathom.workflow.events import DatasetIndexingEvent
from fathom.workflow.nodes.chat import node_error

QUOTE_OUTPUT = "quoteQA"
INDEXING_KEY = "datasetIndexing"  # response data: the searched knowledge bases still indexing


def selected_dataset_ids(value: Any) -> list[str]:
    """The ids of a node's selected knowledge bases (FastGPT's ``[{datasetId}]`` or plain ids)."""
    ids: list[str] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, str):
            ids.append(item)
        elif isinstance(item, dict) and item.get("datasetId"):
            ids.append(str(item["datasetId"]))
    return ids


def _quote_wire(items: list[SearchDataItem]) -> list[dict[str, Any]]:
    """Quotes as FastGPT ``SearchDataResponseItemType`` JSON (score list kept, trace included)."""
    return items_to_wire(items, exclude_none=True)


@register_node(FlowNodeType.datasetSearchNode)
async def dispatch_dataset_search(ctx: NodeContext) -> DispatchResponse:
    """Output ``quoteQA``: the ranked, filtered, budgeted chunks of the selected knowledge bases."""
    searcher = ctx.services.dataset_search
    if searcher is None:
        raise ServiceUnavailableError("The knowledge base search node needs the dataset search service")
    params = ctx.params
    dataset_ids = selected_dataset_ids(params.get("datasets"))
    if not dataset_ids:
        return node_error("No knowledge base selected")
    query = str(params.get(NodeInputKey.userChatInput) or "").strip()
    if not query:
        return node_error("User input is empty")
    collection_filter = params.get("collectionFilterMatch") or None  # FastGPT's tags / createTime filter
    try:
        parse_collection_filter(collection_filter)
    except CollectionFilterError as exc:
        return node_error(str(exc))
    request = SearchDatasetDataParams.model_validate(
        {
            "queries": [query],
            "reRankQuery": query,
            "datasetIds": dataset_ids,
            "similarity": params.get("similarity", 0),
            "limit": params.get("limit") or 1500,
            "searchMode": params.get("searchMode") or "embedding",
            "embeddingWeight": params.get("embeddingWeight", 0.5),
            "usingReRank": bool(params.get("usingReRank")),
            "rerankWeight": params.get("rerankWeight", 0.5),
            "rerankModel": params.get("rerankModel") or None,
            "collectionFilterMatch": collection_filter,
        }
    )
    response = await searcher(request)
    quotes = _quote_wire(response.search_res)
    indexing = [item.model_dump(by_alias=True, mode="json") for item in response.indexing]
    if indexing:  # the answer may miss passages of documents not yet searchable: say so
        ctx.emit(DatasetIndexingEvent(node_id=ctx.node_id, datasets=indexing))
    return DispatchResponse(
        data={QUOTE_OUTPUT: quotes},
        response_data={
            **({INDEXING_KEY: indexing} if indexing else {}),
            "totalPoints": 0,
            "query": query,
            "similarity": response.similarity if response.using_similarity_filter else None,
            "limit": response.limit,
            "searchMode": response.search_mode,
            "embeddingWeight": request.embedding_weight if response.search_mode == "mixedRecall" else None,
            "rerankWeight": request.rerank_weight if response.using_re_rank else None,
            "searchUsingReRank": response.using_re_rank,
            "embeddingTokens": response.embedding_tokens,
            "quoteList": quotes,
        },
        node_dispatch_usages=[
            {"moduleName": ctx.node.name, "totalPoints": 0, "inputTokens": response.embedding_tokens}
        ],
        tool_responses=[
            {"sourceName": item.source_name, "content": f"{item.q}\n{item.a}".strip()}
            for item in response.search_res
        ],
    )


@register_node(FlowNodeType.datasetConcatNode, waits=False)
async def dispatch_dataset_concat(ctx: NodeContext) -> DispatchResponse:
    """Output ``quoteQA``: every list input fused by RRF (k = 60), then cut to ``limit`` tokens."""
    limit = int(ctx.params.get("limit") or 1500)
    lists = [
        value
        for key, value in ctx.params.items()
        if key not in ("limit", NodeInputKey.addInputParam) and isinstance(value, list)
    ]
    fused = dataset_search_result_concat(
        [(1.0, [i for i in items if isinstance(i, dict)]) for items in lists]
    )
    kept, _ = filter_search_results_by_max_chars(fused, limit, count_tokens)
    return DispatchResponse(
        data={QUOTE_OUTPUT: _quote_wire(kept)}, response_data={"concatLength": len(fused)}
    )
