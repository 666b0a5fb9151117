"""The knowledge-base application service: collections in, ingestion jobs, search over the stored indexes."""

from fathom.datasets.embedders import EmbedderResolver
from fathom.datasets.ingest import INGEST_JOB_KIND, IngestionService
from fathom.datasets.knowledge_bases import KnowledgeBases
from fathom.datasets.reembed import REEMBED_JOB_KIND, ModelChange, ReembedService
from fathom.datasets.rerankers import RerankerResolver, UnknownRerankModel
from fathom.datasets.search import DatasetSearchService

__all__ = [
    "INGEST_JOB_KIND",
    "REEMBED_JOB_KIND",
    "DatasetSearchService",
    "EmbedderResolver",
    "IngestionService",
    "KnowledgeBases",
    "ModelChange",
    "ReembedService",
    "RerankerResolver",
    "UnknownRerankModel",
]
