"""Training as the routes see it: the queue of a knowledge base, the chunks the model failed on and
retrying them (a failed import is retried too), and the training bills imports name (``billId``)."""

from __future__ import annotations

from collections.abc import Sequence

from fathom.datasets.errors import InvalidDatasetRequest, RecordMissing
from fathom.datasets.ingest import IngestionService
from fathom.datasets.reembed import ReembedService
from fathom.store.knowledge import SqlDatasetRepository
from fathom.store.knowledge.training import SqlTrainingRepository
from fathom.store.protocols import CollectionRecord, NotFound, TrainingItemRecord
from fathom.store.repositories import SqlUsageRepository


class TrainingService:
    def __init__(
        self,
        datasets: SqlDatasetRepository,
        training: SqlTrainingRepository,
        ingestion: IngestionService,
        reembed: ReembedService,
        usage: SqlUsageRepository,
    ) -> None:
        self.datasets = datasets
        self.training = training
        self.ingestion = ingestion
        self.reembed = reembed
        self.usage = usage

    async def queue(self, team_id: str, dataset_id: str) -> tuple[int, int]:
        """FastGPT's (``trainingCount``, ``rebuildingCount``): chunks and model training items still to
        write plus failed items, and index rows waiting to be embedded again after a model change."""
        training = await self.training.dataset_training_count(team_id, dataset_id)
        return training, await self.reembed.rebuilding_count(dataset_id)

    async def errors(
        self, team_id: str, collection_id: str, *, offset: int, limit: int
    ) -> tuple[list[TrainingItemRecord], int]:
        """A page of a collection's failed items (in chunk order) and how many there are."""
        return await self.training.errors(team_id, collection_id, offset=offset, limit=limit)

    async def find_item(self, team_id: str, item_id: str) -> TrainingItemRecord:
        try:
            return await self.training.get(team_id, item_id)
        except NotFound:
            raise RecordMissing("data", f"training data {item_id} not found") from None

    async def item_in_collection(
        self, team_id: str, collection: CollectionRecord, item_id: str
    ) -> TrainingItemRecord | None:
        """A training item of ``collection`` (waiting for the model, or failed), or ``None`` when the
        collection has no such item (trained and gone, deleted, another collection's)."""
        return await self.training.in_collection(team_id, collection.id, item_id)

    async def delete_item(self, team_id: str, collection: CollectionRecord, item_id: str) -> None:
        """Delete a training item so the model never trains it; one the collection does not have is
        :class:`RecordMissing` naming ``dataId`` (a success that deleted nothing would hide a typo)."""
        if not await self.training.delete_item(team_id, collection.id, item_id):
            raise RecordMissing("", f"dataId: collection {collection.id} has no training data {item_id}")

    async def retry_item(
        self,
        team_id: str,
        item: TrainingItemRecord,
        collection: CollectionRecord,
        *,
        q: str | None,
        a: str | None,
    ) -> None:
        """Retry one failed item of ``collection`` (``q``/``a`` replace its text first)."""
        if item.error is None:
            raise InvalidDatasetRequest(
                f"dataId: training data {item.id} has not failed; only failed ones retry"
            )
        await self.training.retry(team_id, item_id=item.id, q=q, a=a)
        await self._requeue([collection])

    async def retry_collection(self, team_id: str, collection: CollectionRecord) -> None:
        """Retry every failed item of the collection (and its import, when that failed)."""
        await self.training.retry(team_id, collection_id=collection.id)
        await self._requeue_failed([collection])

    async def retry_dataset(self, team_id: str, dataset_id: str) -> None:
        """Retry every failed item and failed import of the knowledge base's collections."""
        ids = set(await self.training.retry(team_id, dataset_id=dataset_id))
        collections, _ = await self.datasets.list_collections(team_id, dataset_id, limit=100_000)
        ids |= {c.id for c in collections if c.status == "error"}
        await self._requeue_failed([c for c in collections if c.id in ids])

    async def _requeue_failed(self, scope: Sequence[CollectionRecord]) -> None:
        counts = await self.training.counts([c.id for c in scope])
        await self._requeue(
            [c for c in scope if c.status == "error" or (c.id in counts and counts[c.id].pending)]
        )

    async def _requeue(self, collections: Sequence[CollectionRecord]) -> None:
        """Queue the training of collections again (a failed import from its source)."""
        for collection in collections:
            failed_import = collection.status == "error"
            await self.datasets.set_collection_state(collection.id, "waiting", error=None)
            await self.ingestion.enqueue(collection, train_only=not failed_import)

    async def create_bill(
        self, team_id: str, dataset_id: str, name: str, *, member_id: str | None, api_key_id: str | None
    ) -> str:
        """A training bill of the knowledge base: its id is the ``billId`` imports name."""
        bill = await self.usage.create_bill(
            team_id, dataset_id, name, member_id=member_id, api_key_id=api_key_id
        )
        return bill.id

    async def bill(self, team_id: str, bill_id: str | None) -> str | None:
        """``bill_id`` when it names a training bill of the team (None when not sent)."""
        if bill_id is None:
            return None
        try:
            await self.usage.get_bill(team_id, bill_id)
        except NotFound:
            raise InvalidDatasetRequest(
                f"billId: no training bill has the id {bill_id!r}; create one with "
                "/api/support/wallet/usage/createTrainingUsage, or leave billId out"
            ) from None
        return bill_id
