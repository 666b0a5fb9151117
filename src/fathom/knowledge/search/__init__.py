"""The dataset search pipeline (spec §5.3-5.7): recall, weighted RRF, rerank, filters, budget."""

from fathom.knowledge.search.filters import (
    count_recall_limit,
    dedupe_results,
    filter_by_max_tokens,
    filter_by_similarity,
    filter_search_results_by_max_chars,
    normalize_search_mode,
    similarity_score_type,
)
from fathom.knowledge.search.pipeline import search_dataset_data
from fathom.knowledge.search.query_extension import ExtendedQueries, parse_query_extension_output
from fathom.knowledge.search.recall import embed_texts, embedding_recall, full_text_recall
from fathom.knowledge.search.rerank import RerankOutcome, rerank_search_results
from fathom.knowledge.search.rrf import RRF_K, RrfInput, dataset_search_result_concat
from fathom.knowledge.search.types import (
    SEARCH_MODES,
    ScoreTrace,
    ScoreType,
    SearchDataItem,
    SearchDatasetDataParams,
    SearchDatasetDataResponse,
    SearchMode,
    SearchScore,
    TraceEntry,
    TraceStage,
)

__all__ = [
    "RRF_K",
    "SEARCH_MODES",
    "ExtendedQueries",
    "RerankOutcome",
    "RrfInput",
    "ScoreTrace",
    "ScoreType",
    "SearchDataItem",
    "SearchDatasetDataParams",
    "SearchDatasetDataResponse",
    "SearchMode",
    "SearchScore",
    "TraceEntry",
    "TraceStage",
    "count_recall_limit",
    "dataset_search_result_concat",
    "dedupe_results",
    "embed_texts",
    "embedding_recall",
    "filter_by_max_tokens",
    "filter_by_similarity",
    "filter_search_results_by_max_chars",
    "full_text_recall",
    "normalize_search_mode",
    "parse_query_extension_output",
    "rerank_search_results",
    "search_dataset_data",
    "similarity_score_type",
]
