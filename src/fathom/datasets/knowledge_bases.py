"""The knowledge-base application services the HTTP routes call, built once by the platform."""

from __future__ import annotations

from dataclasses import dataclass

from fathom.datasets.chunk_preview import ChunkPreviewer
from fathom.datasets.collection_service import CollectionService
from fathom.datasets.dataset_service import DatasetService
from fathom.datasets.rows import DataRowService
from fathom.datasets.sync import SourceSyncService
from fathom.datasets.tags import TagService
from fathom.datasets.training_service import TrainingService


@dataclass(frozen=True)
class KnowledgeBases:
    """One service per kind of thing a knowledge base holds: the knowledge bases and folders themselves
    (with the search test), their collections, the rows (chunks) of a collection, tags, the import
    preview, API-library and website sources, and training (queue, failures, retries, bills). A route
    checks the caller's permission, then calls one of these; a refusal is a
    :class:`~fathom.datasets.errors.DatasetRequestError` the server answers as FastGPT does."""

    datasets: DatasetService
    collections: CollectionService
    rows: DataRowService
    tags: TagService
    previews: ChunkPreviewer
    sources: SourceSyncService
    training: TrainingService
