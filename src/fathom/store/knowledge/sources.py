"""External sources of knowledge bases (API file library, website), the source of each synced collection
with the hash of the text its chunks hold, and the history of sync runs.

:meth:`SqlSourceRepository.replace_chunks` swaps a collection's chunks for new ones in one transaction
(old rows out, new rows in, hash recorded): a search sees the old version or the new one, never half.
:meth:`SqlSourceRepository.claim_due` is the scheduler's claim: a compare-and-set on ``next_sync_at``, so
of several workers ticking at once exactly one queues a dataset's scheduled sync.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update

from fathom.store.db import Database
from fathom.store.job_doorbell import JobDoorbell, announce_job
from fathom.store.knowledge.chunks import ChunkRows, SqlChunkRepository
from fathom.store.knowledge.datasets import bump_index_version, purge_collection_rows
from fathom.store.models import (
    Collection,
    CollectionSource,
    Dataset,
    Job,
    KnowledgeSource,
    SourceSync,
    utcnow,
)
from fathom.store.protocols import NotFound

ACTIVE_SYNC_STATES = ("queued", "running")


@dataclass(frozen=True)
class SyncJob:
    """The job a sync run is queued as (written with the run, in its transaction)."""

    kind: str
    max_attempts: int = 3


async def _queue_sync(session: Any, row: SourceSync, job: SyncJob) -> None:
    session.add(row)
    await session.flush()
    session.add(
        Job(
            kind=job.kind,
            payload={"syncId": row.id},
            team_id=row.team_id,
            max_attempts=job.max_attempts,
            run_after=utcnow(),
            status="queued",
            lane=row.dataset_id,
        )
    )
    await session.flush()
    await announce_job(session)


@dataclass(frozen=True)
class KnowledgeSourceRecord:
    dataset_id: str
    team_id: str
    kind: str
    config: dict[str, Any]
    secret: str | None
    auto_sync: bool
    sync_interval_seconds: int
    next_sync_at: datetime | None


@dataclass(frozen=True)
class CollectionSourceRecord:
    collection_id: str
    dataset_id: str
    kind: str
    ref: str
    content_hash: str | None
    synced_at: datetime | None
    last_error: str | None


@dataclass(frozen=True)
class SyncRecord:
    id: str
    team_id: str
    dataset_id: str
    collection_id: str | None
    trigger: str
    status: str
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)
    error: str | None = None
    attempts: int = 0
    created_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None


def _source(row: KnowledgeSource) -> KnowledgeSourceRecord:
    return KnowledgeSourceRecord(
        row.dataset_id,
        row.team_id,
        row.kind,
        dict(row.config or {}),
        row.secret,
        bool(row.auto_sync),
        int(row.sync_interval_seconds),
        row.next_sync_at,
    )


def _collection_source(row: CollectionSource) -> CollectionSourceRecord:
    return CollectionSourceRecord(
        row.collection_id, row.dataset_id, row.kind, row.ref, row.content_hash, row.synced_at, row.last_error
    )


def _sync(row: SourceSync) -> SyncRecord:
    return SyncRecord(
        id=row.id,
        team_id=row.team_id,
        dataset_id=row.dataset_id,
        collection_id=row.collection_id,
        trigger=row.trigger,
        status=row.status,
        counts={str(k): int(v) for k, v in (row.counts or {}).items()},
        failures=[dict(item) for item in row.failures or []],
        error=row.error,
        attempts=int(row.attempts),
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
    )


class SqlSourceRepository:
    def __init__(self, db: Database, chunks: SqlChunkRepository, doorbell: JobDoorbell) -> None:
        self.db = db
        self.chunks = chunks
        self.doorbell = doorbell  # the job queue's: rung once a sync's job is committed

    # -- the knowledge base's source ------------------------------------------------------------------

    async def configure(
        self,
        team_id: str,
        dataset_id: str,
        *,
        kind: str,
        config: dict[str, Any],
        secret: str | None,
        auto_sync: bool,
        sync_interval_seconds: int,
    ) -> KnowledgeSourceRecord:
        """Set (or replace) the dataset's source; with ``auto_sync`` the first scheduled sync is due one
        interval from now."""
        now = utcnow()
        async with self.db.transaction() as session:
            row = await session.get(KnowledgeSource, dataset_id)
            if row is None:
                row = KnowledgeSource(dataset_id=dataset_id, team_id=team_id, created_at=now)
                session.add(row)
            row.kind = kind
            row.config = config
            row.secret = secret
            row.auto_sync = auto_sync
            row.sync_interval_seconds = sync_interval_seconds
            row.next_sync_at = now + timedelta(seconds=sync_interval_seconds) if auto_sync else None
            row.updated_at = now
            if kind in ("apiDataset", "websiteDataset"):
                await session.execute(update(Dataset).where(Dataset.id == dataset_id).values(type=kind))
            await session.flush()
            return _source(row)

    async def get(self, dataset_id: str) -> KnowledgeSourceRecord | None:
        async with self.db.sessions() as session:
            row = await session.get(KnowledgeSource, dataset_id)
            return _source(row) if row is not None else None

    async def claim_due(self, now: datetime, job: SyncJob, *, limit: int = 20) -> list[SyncRecord]:
        """Queue the scheduled syncs due at ``now``: each due dataset's ``next_sync_at`` is moved one
        interval on by a compare-and-set, and only the process whose update took records the sync and
        its job (one transaction). A dataset with a sync still queued or running gets none this time."""
        async with self.db.sessions() as session:
            due = list(
                await session.execute(
                    select(KnowledgeSource.dataset_id, KnowledgeSource.next_sync_at)
                    .where(KnowledgeSource.auto_sync.is_(True), KnowledgeSource.next_sync_at <= now)
                    .order_by(KnowledgeSource.next_sync_at)
                    .limit(limit)
                )
            )
        claimed: list[SyncRecord] = []
        for dataset_id, due_at in due:
            async with self.db.transaction() as session:
                row = await session.get(KnowledgeSource, dataset_id)
                if row is None:
                    continue
                moved = await session.execute(
                    update(KnowledgeSource)
                    .where(KnowledgeSource.dataset_id == dataset_id, KnowledgeSource.next_sync_at == due_at)
                    .values(next_sync_at=now + timedelta(seconds=row.sync_interval_seconds))
                )
                if getattr(moved, "rowcount", 0) != 1:
                    continue  # another worker claimed it first
                busy = await session.scalar(
                    select(SourceSync.id)
                    .where(SourceSync.dataset_id == dataset_id, SourceSync.status.in_(ACTIVE_SYNC_STATES))
                    .limit(1)
                )
                if busy is not None:
                    continue
                sync = SourceSync(
                    team_id=row.team_id,
                    dataset_id=dataset_id,
                    trigger="schedule",
                    status="queued",
                    counts={},
                    failures=[],
                    attempts=0,
                )
                await _queue_sync(session, sync, job)
                claimed.append(_sync(sync))
        if claimed:
            self.doorbell.ring()
        return claimed

    # -- collections' sources ---------------------------------------------------------------------------

    async def link_collection(self, collection_id: str, dataset_id: str, *, kind: str, ref: str) -> None:
        async with self.db.transaction() as session:
            session.add(
                CollectionSource(collection_id=collection_id, dataset_id=dataset_id, kind=kind, ref=ref)
            )

    async def create_collection(
        self,
        team_id: str,
        dataset_id: str,
        name: str,
        *,
        type: str,
        kind: str,
        ref: str,
        raw_link: str | None = None,
        chunk_settings: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        training_type: str = "chunk",
    ) -> str:
        """A collection made from a page or an API file, and its source row, in one transaction."""
        async with self.db.transaction() as session:
            row = Collection(
                team_id=team_id,
                dataset_id=dataset_id,
                name=name,
                type=type,
                raw_link=raw_link,
                training_type=training_type,
                chunk_settings=chunk_settings or {},
                status="waiting",
                tags=[],
            )
            row.metadata_ = metadata or {}
            session.add(row)
            await session.flush()
            session.add(CollectionSource(collection_id=row.id, dataset_id=dataset_id, kind=kind, ref=ref))
            await session.flush()
            return row.id

    async def collection_source(self, collection_id: str) -> CollectionSourceRecord | None:
        async with self.db.sessions() as session:
            row = await session.get(CollectionSource, collection_id)
            return _collection_source(row) if row is not None else None

    async def dataset_collection_sources(self, dataset_id: str) -> list[CollectionSourceRecord]:
        async with self.db.sessions() as session:
            rows = await session.scalars(
                select(CollectionSource)
                .where(CollectionSource.dataset_id == dataset_id)
                .order_by(CollectionSource.collection_id)
            )
            return [_collection_source(row) for row in rows]

    async def replace_chunks(
        self, collection_id: str, rows: ChunkRows, *, content_hash: str, kind: str, ref: str
    ) -> None:
        """Swap the collection's chunks for ``rows`` and record ``content_hash``, in one transaction."""
        async with self.db.transaction() as session:
            collection = await session.get(Collection, collection_id)
            if collection is None:
                raise NotFound(f"collection {collection_id} not found")
            await purge_collection_rows(session, [collection_id])
            await self.chunks.insert_chunk_rows(session, rows)
            count = len(rows.chunks)
            await session.execute(
                update(Collection)
                .where(Collection.id == collection_id)
                .values(
                    status="ready", error=None, chunks_total=count, chunks_done=count, updated_at=utcnow()
                )
            )
            source = await session.get(CollectionSource, collection_id)
            if source is None:
                source = CollectionSource(
                    collection_id=collection_id, dataset_id=collection.dataset_id, kind=kind, ref=ref
                )
                session.add(source)
            source.content_hash = content_hash
            source.synced_at = utcnow()
            source.last_error = None
            await bump_index_version(session, [collection.dataset_id])

    async def mark_synced(self, collection_id: str, *, error: str | None = None) -> None:
        """Record a sync of the collection that changed nothing (``error``: why it could not be read)."""
        values: dict[str, Any] = {"last_error": error}
        if error is None:
            values["synced_at"] = utcnow()
        async with self.db.transaction() as session:
            await session.execute(
                update(CollectionSource)
                .where(CollectionSource.collection_id == collection_id)
                .values(**values)
            )

    async def delete_collection(self, collection_id: str) -> None:
        """Remove a collection whose page or file is gone, with its chunks, in one transaction."""
        async with self.db.transaction() as session:
            row = await session.get(Collection, collection_id)
            if row is None:
                return
            await purge_collection_rows(session, [collection_id])
            await session.execute(
                delete(CollectionSource).where(CollectionSource.collection_id == collection_id)
            )
            await bump_index_version(session, [row.dataset_id])
            await session.delete(row)

    # -- sync runs ----------------------------------------------------------------------------------------

    async def create_sync(
        self, team_id: str, dataset_id: str, job: SyncJob, *, collection_id: str | None, trigger: str
    ) -> SyncRecord:
        """Record a sync run and queue its job, in one transaction."""
        async with self.db.transaction() as session:
            row = SourceSync(
                team_id=team_id,
                dataset_id=dataset_id,
                collection_id=collection_id,
                trigger=trigger,
                status="queued",
                counts={},
                failures=[],
                attempts=0,
            )
            await _queue_sync(session, row, job)
            record = _sync(row)
        self.doorbell.ring()
        return record

    async def start_sync(self, sync_id: str) -> SyncRecord:
        """Mark the run started (again, after a worker died: its counts start over)."""
        async with self.db.transaction() as session:
            row = await session.get(SourceSync, sync_id)
            if row is None:
                raise NotFound(f"sync {sync_id} not found")
            row.status = "running"
            row.attempts = int(row.attempts) + 1
            row.counts = {}
            row.failures = []
            row.error = None
            row.started_at = utcnow()
            row.finished_at = None
            await session.flush()
            return _sync(row)

    async def update_sync(
        self,
        sync_id: str,
        *,
        counts: dict[str, int],
        failures: Sequence[dict[str, str]],
        status: str | None = None,
        error: str | None = None,
    ) -> None:
        values: dict[str, Any] = {"counts": dict(counts), "failures": list(failures), "error": error}
        if status is not None:
            values["status"] = status
            if status in ("done", "failed"):
                values["finished_at"] = utcnow()
        async with self.db.transaction() as session:
            await session.execute(update(SourceSync).where(SourceSync.id == sync_id).values(**values))

    async def list_syncs(
        self, dataset_id: str, *, collection_id: str | None = None, limit: int = 20
    ) -> list[SyncRecord]:
        where = [SourceSync.dataset_id == dataset_id]
        if collection_id is not None:
            where.append(SourceSync.collection_id == collection_id)
        async with self.db.sessions() as session:
            rows = await session.scalars(
                select(SourceSync)
                .where(*where)
                .order_by(SourceSync.created_at.desc(), SourceSync.id.desc())
                .limit(limit)
            )
            return [_sync(row) for row in rows]
