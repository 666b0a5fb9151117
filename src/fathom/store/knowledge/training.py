"""Training items: the chunks waiting for a dataset's model (FastGPT's ``dataset_trainings``).

An item is added once per chunk position, deleted by :meth:`SqlChunkRepository.write_chunks` in the
transaction that writes what the model made of it, and kept with its ``error`` when the model failed on it,
until a retry clears the error. The collection's ``chunks_total`` counts the items still to do, so its
``chunks_total - chunks_done`` is the training left (FastGPT's ``trainingAmount``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import delete, func, select, update

from fathom.store.db import Database
from fathom.store.models import Collection, TrainingItem, utcnow
from fathom.store.protocols import NotFound, TrainingItemRecord


@dataclass(frozen=True)
class NewTrainingItem:
    chunk_index: int
    q: str
    a: str = ""
    prompt: str | None = None


@dataclass(frozen=True)
class TrainingCounts:
    """Items of a collection by mode: waiting for the model, and failed."""

    pending: dict[str, int]
    failed: dict[str, int]

    @property
    def failed_total(self) -> int:
        return sum(self.failed.values())


def _slot(chunk_index: int, mode: str, q: str) -> tuple[int, str]:
    """What one item stands for: a chunk position, or (image index items) a position and its image."""
    return (chunk_index, q if mode == "image" else "")


def _record(row: TrainingItem) -> TrainingItemRecord:
    return TrainingItemRecord(
        row.id,
        row.team_id,
        row.dataset_id,
        row.collection_id,
        row.mode,
        row.chunk_index,
        row.q,
        row.a,
        row.prompt,
        row.bill_id,
        row.error,
        row.updated_at,
    )


class SqlTrainingRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add_items(
        self,
        team_id: str,
        dataset_id: str,
        collection_id: str,
        mode: str,
        items: Sequence[NewTrainingItem],
        *,
        bill_id: str | None = None,
    ) -> int:
        """Queue chunks for the model; a position that already has an item is left as it is (an image
        item: a position and image that has one, as a chunk may hold several images). The
        collection's ``chunks_total`` grows by the items added. Returns how many were added."""
        async with self.db.transaction() as session:
            rows = await session.execute(
                select(TrainingItem.chunk_index, TrainingItem.mode, TrainingItem.q).where(
                    TrainingItem.collection_id == collection_id
                )
            )
            taken = {_slot(index, kind, q) for index, kind, q in rows}
            fresh = [item for item in items if _slot(item.chunk_index, mode, item.q) not in taken]
            now = utcnow()
            session.add_all(
                TrainingItem(
                    team_id=team_id,
                    dataset_id=dataset_id,
                    collection_id=collection_id,
                    mode=mode,
                    chunk_index=item.chunk_index,
                    q=item.q,
                    a=item.a,
                    prompt=item.prompt,
                    bill_id=bill_id,
                    created_at=now,
                    updated_at=now,
                )
                for item in fresh
            )
            if fresh:
                await session.execute(
                    update(Collection)
                    .where(Collection.id == collection_id)
                    .values(chunks_total=Collection.chunks_total + len(fresh))
                )
            return len(fresh)

    async def item_positions(self, collection_id: str) -> set[int]:
        """Chunk positions of a collection that have an item (waiting or failed)."""
        async with self.db.sessions() as session:
            return set(
                await session.scalars(
                    select(TrainingItem.chunk_index).where(TrainingItem.collection_id == collection_id)
                )
            )

    async def pending(self, collection_id: str) -> list[TrainingItemRecord]:
        """The items of a collection waiting for the model, in chunk order."""
        async with self.db.sessions() as session:
            rows = await session.scalars(
                select(TrainingItem)
                .where(TrainingItem.collection_id == collection_id, TrainingItem.error.is_(None))
                .order_by(TrainingItem.chunk_index, TrainingItem.id)
            )
            return [_record(row) for row in rows]

    async def fail(self, item_id: str, error: str) -> None:
        """Keep the item with the model's error; it no longer counts as training left."""
        async with self.db.transaction() as session:
            row = await session.get(TrainingItem, item_id)
            if row is None or row.error is not None:
                return
            row.error, row.updated_at = error, utcnow()
            await session.execute(
                update(Collection)
                .where(Collection.id == row.collection_id)
                .values(chunks_total=Collection.chunks_total - 1)
            )

    async def get(self, team_id: str, item_id: str) -> TrainingItemRecord:
        async with self.db.sessions() as session:
            row = await session.get(TrainingItem, item_id)
            if row is None or row.team_id != team_id:
                raise NotFound(f"training data {item_id} not found")
            return _record(row)

    async def in_collection(
        self, team_id: str, collection_id: str, item_id: str
    ) -> TrainingItemRecord | None:
        """The item ``item_id`` of a collection (waiting or failed), or None when the collection has none
        such (never an item of another collection or team)."""
        async with self.db.sessions() as session:
            row = await session.get(TrainingItem, item_id)
            if row is None or row.team_id != team_id or row.collection_id != collection_id:
                return None
            return _record(row)

    async def delete_item(self, team_id: str, collection_id: str, item_id: str) -> bool:
        """Delete an item of a collection, so the model never trains it (a run that has it in hand drops
        its result: :class:`AlreadyTrained`). A waiting item no longer counts as training left; a failed
        one did not. Returns whether there was such an item."""
        async with self.db.transaction() as session:
            row = await session.get(TrainingItem, item_id)
            if row is None or row.team_id != team_id or row.collection_id != collection_id:
                return False
            waiting = row.error is None
            gone = await session.execute(delete(TrainingItem).where(TrainingItem.id == item_id))
            if getattr(gone, "rowcount", 0) != 1:  # a training run wrote it (and deleted it) meanwhile
                return False
            if waiting:
                await session.execute(
                    update(Collection)
                    .where(Collection.id == collection_id)
                    .values(chunks_total=Collection.chunks_total - 1)
                )
            return True

    async def retry(
        self,
        team_id: str,
        *,
        dataset_id: str | None = None,
        collection_id: str | None = None,
        item_id: str | None = None,
        q: str | None = None,
        a: str | None = None,
    ) -> list[str]:
        """Clear the error of failed items (one, a collection's or a dataset's), so the model is asked
        again; ``q``/``a`` replace the text of the one item. Returns the collections whose items were
        cleared."""
        where = [TrainingItem.team_id == team_id, TrainingItem.error.is_not(None)]
        if item_id is not None:
            where.append(TrainingItem.id == item_id)
        if collection_id is not None:
            where.append(TrainingItem.collection_id == collection_id)
        if dataset_id is not None:
            where.append(TrainingItem.dataset_id == dataset_id)
        async with self.db.transaction() as session:
            rows = list(await session.scalars(select(TrainingItem).where(*where)))
            per_collection: dict[str, int] = {}
            for row in rows:
                row.error, row.updated_at = None, utcnow()
                if q is not None:
                    row.q = q
                if a is not None:
                    row.a = a
                per_collection[row.collection_id] = per_collection.get(row.collection_id, 0) + 1
            for cid, count in per_collection.items():
                await session.execute(
                    update(Collection)
                    .where(Collection.id == cid)
                    .values(chunks_total=Collection.chunks_total + count)
                )
            return sorted(per_collection)

    async def errors(
        self, team_id: str, collection_id: str, *, offset: int = 0, limit: int = 30
    ) -> tuple[list[TrainingItemRecord], int]:
        """A page of a collection's failed items (in chunk order) and how many there are."""
        where = [
            TrainingItem.team_id == team_id,
            TrainingItem.collection_id == collection_id,
            TrainingItem.error.is_not(None),
        ]
        async with self.db.sessions() as session:
            total = int(
                await session.scalar(select(func.count()).select_from(TrainingItem).where(*where)) or 0
            )
            rows = await session.scalars(
                select(TrainingItem)
                .where(*where)
                .order_by(TrainingItem.chunk_index, TrainingItem.id)
                .offset(offset)
                .limit(limit)
            )
            return [_record(row) for row in rows], total

    async def counts(self, collection_ids: Sequence[str]) -> dict[str, TrainingCounts]:
        """Per collection (only those with items): items waiting and failed, by mode."""
        if not collection_ids:
            return {}
        async with self.db.sessions() as session:
            rows = await session.execute(
                select(
                    TrainingItem.collection_id,
                    TrainingItem.mode,
                    TrainingItem.error.is_not(None),
                    func.count(),
                )
                .where(TrainingItem.collection_id.in_(list(collection_ids)))
                .group_by(TrainingItem.collection_id, TrainingItem.mode, TrainingItem.error.is_not(None))
            )
            found: dict[str, TrainingCounts] = {}
            for cid, mode, failed, count in rows:
                entry = found.setdefault(cid, TrainingCounts({}, {}))
                target = entry.failed if failed else entry.pending
                target[mode] = target.get(mode, 0) + int(count)
            return found

    async def dataset_training_count(self, team_id: str, dataset_id: str) -> int:
        """FastGPT's ``trainingCount`` of a dataset: the chunks or training items its collections have still
        to write (one for a collection not yet split), plus its failed training items."""
        async with self.db.sessions() as session:
            failed = await session.scalar(
                select(func.count())
                .select_from(TrainingItem)
                .where(
                    TrainingItem.team_id == team_id,
                    TrainingItem.dataset_id == dataset_id,
                    TrainingItem.error.is_not(None),
                )
            )
            rows = await session.execute(
                select(Collection.status, Collection.chunks_total, Collection.chunks_done).where(
                    Collection.team_id == team_id,
                    Collection.dataset_id == dataset_id,
                    Collection.status.in_(("waiting", "parsing", "indexing")),
                )
            )
            left = sum(max(total - done, 1) if status == "indexing" else 1 for status, total, done in rows)
        return int(failed or 0) + left
