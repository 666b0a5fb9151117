"""Knowledge-base persistence: datasets, collections, chunks, and the full-text and vector indexes."""

from fathom.store.knowledge.chunks import SqlChunkRepository
from fathom.store.knowledge.datasets import SqlDatasetRepository
from fathom.store.knowledge.fulltext import SqlFullTextIndex
from fathom.store.knowledge.reembed import IndexToReembed, SqlReembedRepository
from fathom.store.knowledge.tags import SqlTagRepository, TagRecord
from fathom.store.knowledge.vectors import SqlVectorIndex

__all__ = [
    "IndexToReembed",
    "SqlChunkRepository",
    "SqlDatasetRepository",
    "SqlFullTextIndex",
    "SqlReembedRepository",
    "SqlTagRepository",
    "SqlVectorIndex",
    "TagRecord",
]
