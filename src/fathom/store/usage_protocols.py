"""Usage records (what a chat turn or a training run spent) and the repository that keeps and sums them.

Imports no database library (see :mod:`fathom.store.protocols`, which re-exports these names).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol


@dataclass(frozen=True)
class UsageRecord:
    team_id: str
    app_id: str | None
    source: str
    module_name: str
    model: str
    input_tokens: int
    output_tokens: int
    total_points: float
    api_key_id: str | None = None
    created_at: datetime | None = None
    bill_id: str | None = None  # the training bill (``createTrainingUsage``) it belongs to


@dataclass(frozen=True)
class UsageSummaryRow:
    day: str
    app_id: str | None
    input_tokens: int
    output_tokens: int
    total_points: float
    records: int


@dataclass(frozen=True)
class TrainingBillRecord:
    """A training bill: ``createTrainingUsage``'s answer is its id (FastGPT's ``billId``)."""

    id: str
    team_id: str
    dataset_id: str
    name: str
    created_at: datetime


@dataclass(frozen=True)
class BillTotals:
    """The usage records of one training bill, summed."""

    bill_id: str
    name: str
    dataset_id: str
    input_tokens: int
    total_points: float
    records: int
    output_tokens: int = 0  # a model's answers (qa / auto-index training); embeddings have none


class UsageRepository(Protocol):
    async def record(self, usage: UsageRecord) -> None: ...
    async def summarize(
        self, team_id: str, *, app_id: str | None = None, days: int = 30
    ) -> list[UsageSummaryRow]: ...
