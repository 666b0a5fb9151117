"""What training costs: the embedding tokens of an import or a push, stored as one usage record of source
``training`` (no app), under the training bill a client named with ``billId`` (FastGPT's
``support/wallet/usage/createTrainingUsage``), so usage reports can group a script's trainings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from fathom.knowledge.ports import Embedder
from fathom.llm import count_tokens
from fathom.store.protocols import CollectionRecord, UsageRecord

TRAINING_SOURCE = "training"
EMBEDDING_MODULE = "Embedding index"


class UsageSink(Protocol):
    async def record(self, usage: UsageRecord) -> None: ...


def embedding_tokens(texts: Sequence[str]) -> int:
    """The tokens of the texts sent to the embedding model (cl100k, as the search's budget counts)."""
    return sum(count_tokens(text) for text in texts)


def training_usage(
    collection: CollectionRecord, embedder: Embedder, tokens: int, bill_id: str | None
) -> UsageRecord:
    """The usage record of ``tokens`` embedded for ``collection`` (priced by the model's per-1k input
    price when it is an API model; the embedded local models cost nothing)."""
    config = getattr(embedder, "config", None)
    price = getattr(config, "price", None)
    points = float(price(tokens, 0)) if callable(price) else 0.0
    return UsageRecord(
        team_id=collection.team_id,
        app_id=None,
        source=TRAINING_SOURCE,
        module_name=EMBEDDING_MODULE,
        model=embedder.model_id,
        input_tokens=tokens,
        output_tokens=0,
        total_points=points,
        bill_id=bill_id,
    )
