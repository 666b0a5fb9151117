"""The knowledge-base application services the HTTP routes call, built once by the platform."""

from __future__ import annotations

from dataclasses import dataclass

from fathom.datasets.chunk_preview import ChunkPreviewer
from fathom.datasets.collection_service import CollectionService
from fathom.datasets.dataset_service import DatasetService
from fathom.datasets.rows import DataRowService
from fathom.datasets.tags import TagService
from fathom.datasets.training_service import TrainingService


@dataclass(frozen=True)
class KnowledgeBases:
    """One service per kind of thing a knowledge base holds."""

    datasets: DatasetService
    collections: CollectionService
    rows: DataRowService
    tags: TagService
    previews: ChunkPreviewer
    training: TrainingService
