"""Datasets (knowledge bases) and their collections, with ingestion state and progress."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.db import Database
from fathom.store.knowledge.scope import CollectionFacts
from fathom.store.knowledge.search_facts import SearchFacts, read_search_facts
from fathom.store.knowledge.tags import delete_tags_of, ensure_tags
from fathom.store.knowledge.tree import collection_subtree, dataset_lineage, dataset_subtree
from fathom.store.models import Collection, Dataset, utcnow
from fathom.store.protocols import CollectionRecord, CollectionStatus, DatasetRecord, NotFound

COLLECTION_STATES: tuple[CollectionStatus, ...] = ("waiting", "parsing", "indexing", "ready", "error")


def _dataset_record(row: Dataset) -> DatasetRecord:
    return DatasetRecord(
        id=row.id,
        team_id=row.team_id,
        name=row.name,
        intro=row.intro,
        type=row.type,
        vector_model=row.vector_model,
        agent_model=row.agent_model,
        chunk_settings=dict(row.chunk_settings or {}),
        created_at=row.created_at,
        updated_at=row.updated_at,
        auto_model_pending=bool(row.auto_model_pending),
        auto_model_reason=row.auto_model_reason,
        parent_id=row.parent_id,
        vlm_model=row.vlm_model or "",
    )


def _collection_record(row: Collection) -> CollectionRecord:
    status: CollectionStatus = row.status  # type: ignore[assignment]
    return CollectionRecord(
        id=row.id,
        team_id=row.team_id,
        dataset_id=row.dataset_id,
        name=row.name,
        type=row.type,
        file_id=row.file_id,
        raw_link=row.raw_link,
        training_type=row.training_type,
        chunk_settings=dict(row.chunk_settings or {}),
        metadata=dict(row.metadata_ or {}),
        status=status,
        error=row.error,
        chunks_total=row.chunks_total,
        chunks_done=row.chunks_done,
        created_at=row.created_at,
        updated_at=row.updated_at,
        parent_id=row.parent_id,
        external_file_id=row.external_file_id,
        tags=tuple(str(tag) for tag in row.tags or ()),
        forbid=bool(row.forbid),
    )


async def purge_collection_rows(session: AsyncSession, collection_ids: list[str]) -> None:
    """Remove the chunks, index rows and full-text rows of collections (inside the caller's transaction)."""
    from fathom.store.models import DataChunk, DataIndex

    if not collection_ids:
        return
    from fathom.store.knowledge.fulltext import delete_fulltext_rows

    # the full-text rows have no foreign keys (FTS5 cannot have them)
    is_postgres = session.get_bind().dialect.name == "postgresql"
    await delete_fulltext_rows(session, is_postgres, collection_ids=collection_ids)
    await session.execute(delete(DataIndex).where(DataIndex.collection_id.in_(collection_ids)))
    await session.execute(delete(DataChunk).where(DataChunk.collection_id.in_(collection_ids)))


async def bump_index_version(session: AsyncSession, dataset_ids: list[str]) -> None:
    """Tell every process's in-memory vector cache that these datasets changed."""
    if dataset_ids:
        await session.execute(
            update(Dataset).where(Dataset.id.in_(dataset_ids)).values(index_version=Dataset.index_version + 1)
        )


class SqlDatasetRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create_dataset(
        self,
        team_id: str,
        name: str,
        *,
        vector_model: str,
        intro: str = "",
        agent_model: str = "",
        vlm_model: str = "",
        chunk_settings: dict[str, Any] | None = None,
        member_id: str | None = None,
        auto_model_reason: str | None = None,
        type: str = "dataset",
        parent_id: str | None = None,
    ) -> DatasetRecord:
        """``auto_model_reason``: the model is ``vectorModel: "auto"``'s create-time guess, for this reason;
        the first import settles it (:meth:`settle_auto_model`)."""
        if not name.strip():
            raise ValueError("name: must not be empty")
        if not vector_model:
            raise ValueError("vectorModel: must name an embedding model")
        async with self.db.transaction() as session:
            if parent_id is not None:
                parent = await self._dataset(session, team_id, parent_id)
                if parent.type != "folder":
                    raise NotFound(f"folder {parent_id} not found")
            row = Dataset(
                team_id=team_id,
                type=type,
                parent_id=parent_id,
                name=name.strip(),
                intro=intro,
                vector_model=vector_model,
                agent_model=agent_model,
                vlm_model=vlm_model,
                chunk_settings=chunk_settings or {},
                member_id=member_id,
                auto_model_pending=True if auto_model_reason is not None else None,
                auto_model_reason=auto_model_reason,
            )
            session.add(row)
            await session.flush()
            return _dataset_record(row)

    async def owner_of(self, dataset_id: str) -> str | None:
        """The member who created the dataset (they may manage it whatever their role)."""
        async with self.db.sessions() as session:
            return await session.scalar(select(Dataset.member_id).where(Dataset.id == dataset_id))

    async def _dataset(self, session: AsyncSession, team_id: str, dataset_id: str) -> Dataset:
        row = await session.get(Dataset, dataset_id)
        if row is None or row.team_id != team_id:
            raise NotFound(f"dataset {dataset_id} not found")
        return row

    async def get_dataset(self, team_id: str, dataset_id: str) -> DatasetRecord:
        async with self.db.sessions() as session:
            return _dataset_record(await self._dataset(session, team_id, dataset_id))

    async def search_facts(self, team_id: str, dataset_ids: Sequence[str]) -> SearchFacts:
        """What a search reads before its legs (models, forbidden collections, datasets indexing), in
        one read; NotFound when a dataset is not the team's."""
        return await read_search_facts(self.db, team_id, dataset_ids)

    async def list_datasets(
        self, team_id: str, *, parent_id: str | None = None, every_level: bool = True
    ) -> list[DatasetRecord]:
        """The team's datasets and folders: all of them, or (``every_level=False``) those directly in
        folder ``parent_id`` (None: the root)."""
        where = [Dataset.team_id == team_id]
        if not every_level:
            where.append(Dataset.parent_id == parent_id if parent_id else Dataset.parent_id.is_(None))
        async with self.db.sessions() as session:
            rows = await session.scalars(
                select(Dataset).where(*where).order_by(Dataset.created_at, Dataset.id)
            )
            return [_dataset_record(row) for row in rows]

    async def lineage(self, dataset_id: str) -> list[tuple[str, str | None, str]]:
        """(id, creator, name) of the dataset or folder and of each folder above it, nearest first (a
        member's permission on a folder holds for what is in it)."""
        async with self.db.sessions() as session:
            return [(row.id, row.member_id, row.name) for row in await dataset_lineage(session, dataset_id)]

    async def move_dataset(self, team_id: str, dataset_id: str, parent_id: str | None) -> None:
        """Put the dataset or folder in folder ``parent_id`` (None: the root); ValueError when that is
        not a folder of the team, or is the folder itself or inside it."""
        async with self.db.transaction() as session:
            row = await self._dataset(session, team_id, dataset_id)
            if parent_id is not None:
                try:
                    parent = await self._dataset(session, team_id, parent_id)
                except NotFound:
                    parent = None
                if parent is None or parent.type != "folder":
                    raise ValueError(f'parentId: {parent_id} is not a folder; send null or "" for the root')
                if any(item.id == dataset_id for item in await dataset_lineage(session, parent_id)):
                    raise ValueError("parentId: a folder cannot move into itself or its subfolders")
            row.parent_id = parent_id
            row.updated_at = utcnow()

    async def settle_auto_model(self, dataset_id: str, vector_model: str, reason: str) -> bool:
        """Set a ``vectorModel: "auto"`` dataset's model for good, if no import settled it first (one
        conditional update: of two first imports at once, one wins). True when this call settled it."""
        async with self.db.transaction() as session:
            result = await session.execute(
                update(Dataset)
                .where(Dataset.id == dataset_id, Dataset.auto_model_pending.is_(True))
                .values(
                    vector_model=vector_model,
                    auto_model_pending=False,
                    auto_model_reason=reason,
                    updated_at=utcnow(),
                )
            )
            return bool(getattr(result, "rowcount", 0))

    async def switch_empty_model(self, dataset_id: str, source_model: str, target_model: str) -> bool:
        """Make ``target_model`` the model of a dataset that has no collection yet (nothing to re-embed,
        no import under way), in one conditional update. False when it has one, or its model moved."""
        async with self.db.transaction() as session:
            has_collection = select(Collection.id).where(Collection.dataset_id == dataset_id).exists()
            result = await session.execute(
                update(Dataset)
                .where(Dataset.id == dataset_id, Dataset.vector_model == source_model, ~has_collection)
                .values(vector_model=target_model, updated_at=utcnow())
            )
            return bool(getattr(result, "rowcount", 0))

    async def update_dataset(self, team_id: str, dataset_id: str, **changes: Any) -> DatasetRecord:
        allowed = {
            "name",
            "intro",
            "agent_model",
            "vlm_model",
            "chunk_settings",
            "vector_model",
            "auto_model_pending",
            "auto_model_reason",
        }
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"cannot change {', '.join(sorted(unknown))}")
        async with self.db.transaction() as session:
            row = await self._dataset(session, team_id, dataset_id)
            for key, value in changes.items():
                setattr(row, key, value)
            row.updated_at = utcnow()
            await session.flush()
            return _dataset_record(row)

    async def delete_dataset(self, team_id: str, dataset_id: str) -> None:
        """Delete the dataset (or folder, with everything in it) with every collection, chunk, tag, index
        and full-text row, in one transaction."""
        async with self.db.transaction() as session:
            await self._dataset(session, team_id, dataset_id)
            subtree = await dataset_subtree(session, team_id, dataset_id)
            ids = list(await session.scalars(select(Collection.id).where(Collection.dataset_id.in_(subtree))))
            await purge_collection_rows(session, ids)
            await session.execute(delete(Collection).where(Collection.dataset_id.in_(subtree)))
            await delete_tags_of(session, subtree)
            for item in reversed(subtree):  # children before their folder
                await session.execute(delete(Dataset).where(Dataset.id == item))

    async def create_collection(
        self,
        team_id: str,
        dataset_id: str,
        name: str,
        *,
        type: str,
        raw_text: str | None = None,
        raw_link: str | None = None,
        file_id: str | None = None,
        training_type: str = "chunk",
        chunk_settings: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        external_file_id: str | None = None,
        tags: Sequence[str] = (),
        created_at: datetime | None = None,
        parent_id: str | None = None,
    ) -> CollectionRecord:
        """``created_at``: FastGPT's ``createTime`` when the client sent one (else now); ``parent_id``: a
        folder collection of the dataset (NotFound otherwise). Tags new to the dataset are created."""
        async with self.db.transaction() as session:
            await self._dataset(session, team_id, dataset_id)
            if parent_id is not None:
                folder = await session.get(Collection, parent_id)
                if folder is None or folder.dataset_id != dataset_id or folder.type != "folder":
                    raise NotFound(f"folder collection {parent_id} not found in knowledge base {dataset_id}")
            await ensure_tags(session, team_id, dataset_id, tags)
            row = Collection(
                parent_id=parent_id,
                team_id=team_id,
                dataset_id=dataset_id,
                name=name,
                type=type,
                raw_text=raw_text,
                raw_link=raw_link,
                file_id=file_id,
                training_type=training_type,
                chunk_settings=chunk_settings or {},
                status="waiting",
                external_file_id=external_file_id,
                tags=list(tags),
                **({"created_at": created_at} if created_at is not None else {}),
            )
            row.metadata_ = metadata or {}
            session.add(row)
            await session.flush()
            return _collection_record(row)

    async def _collection(self, session: AsyncSession, team_id: str | None, collection_id: str) -> Collection:
        row = await session.get(Collection, collection_id)
        if row is None or (team_id is not None and row.team_id != team_id):
            raise NotFound(f"collection {collection_id} not found")
        return row

    async def get_collection(self, team_id: str | None, collection_id: str) -> CollectionRecord:
        """A collection; ``team_id=None`` only for background jobs that already hold the id."""
        async with self.db.sessions() as session:
            return _collection_record(await self._collection(session, team_id, collection_id))

    async def file_ids(self, team_id: str, dataset_id: str) -> list[str]:
        """The stored files the dataset's collections (a folder's: those of everything in it) were
        imported from."""
        async with self.db.sessions() as session:
            subtree = await dataset_subtree(session, team_id, dataset_id)
            rows = await session.scalars(
                select(Collection.file_id).where(
                    Collection.team_id == team_id,
                    Collection.dataset_id.in_(subtree),
                    Collection.file_id.is_not(None),
                )
            )
            return [str(file_id) for file_id in rows]

    async def find_external_file(self, team_id: str, dataset_id: str, external_file_id: str) -> str | None:
        """The id of the dataset's collection with this ``externalFileId`` (the oldest, if several)."""
        async with self.db.sessions() as session:
            return await session.scalar(
                select(Collection.id)
                .where(
                    Collection.team_id == team_id,
                    Collection.dataset_id == dataset_id,
                    Collection.external_file_id == external_file_id,
                )
                .order_by(Collection.created_at, Collection.id)
                .limit(1)
            )

    async def update_collection(self, team_id: str, collection_id: str, **changes: Any) -> CollectionRecord:
        """Set ``name``, ``tags``, ``forbid``, ``parent_id`` or ``created_at`` (only those given)."""
        allowed = {"name", "tags", "forbid", "parent_id", "created_at"}
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"cannot change {', '.join(sorted(unknown))}")
        async with self.db.transaction() as session:
            row = await self._collection(session, team_id, collection_id)
            if "tags" in changes:
                await ensure_tags(session, team_id, row.dataset_id, changes["tags"])
            if changes.get("forbid") is not None and row.type == "folder":  # the folder's contents too
                inside = await collection_subtree(session, [row.id])
                await session.execute(
                    update(Collection).where(Collection.id.in_(inside)).values(forbid=changes["forbid"])
                )
            for key, value in changes.items():
                setattr(row, key, list(value) if key == "tags" else value)
            row.updated_at = utcnow()
            await session.flush()
            return _collection_record(row)

    async def get_collection_source(self, collection_id: str) -> tuple[str | None, str | None, str | None]:
        """(raw_text, raw_link, file_id) for the ingestion job."""
        async with self.db.sessions() as session:
            row = await self._collection(session, None, collection_id)
            return row.raw_text, row.raw_link, row.file_id

    async def list_collections(
        self,
        team_id: str,
        dataset_id: str,
        *,
        offset: int = 0,
        limit: int = 30,
        search: str = "",
        parent_id: str | None = None,
        folders_only: bool = False,
        any_tag: Sequence[str] = (),
    ) -> tuple[list[CollectionRecord], int]:
        """The collections directly in folder ``parent_id`` (None: the root), or, with ``search``, those
        of any level whose name contains it; ``any_tag``: only those carrying one of these names."""
        where: list[Any] = [Collection.team_id == team_id, Collection.dataset_id == dataset_id]
        if search:
            where.append(func.lower(Collection.name).contains(search.lower()))
        else:
            where.append(Collection.parent_id == parent_id if parent_id else Collection.parent_id.is_(None))
        if folders_only:
            where.append(Collection.type == "folder")
        if any_tag:
            async with self.db.sessions() as session:
                pairs = (await session.execute(select(Collection.id, Collection.tags).where(*where))).all()
            tagged = [str(cid) for cid, names in pairs if set(names or ()) & set(any_tag)]
            where.append(Collection.id.in_(tagged))
        async with self.db.sessions() as session:
            total = int(await session.scalar(select(func.count()).select_from(Collection).where(*where)) or 0)
            rows = await session.scalars(
                select(Collection)
                .where(*where)
                .order_by(Collection.created_at.desc(), Collection.id.desc())
                .offset(offset)
                .limit(limit)
            )
            return [_collection_record(row) for row in rows], total

    async def set_collection_state(
        self,
        collection_id: str,
        status: CollectionStatus,
        *,
        error: str | None = None,
        chunks_total: int | None = None,
        chunks_done: int | None = None,
    ) -> None:
        if status not in COLLECTION_STATES:
            raise ValueError(f"status: {status!r} is not one of {', '.join(COLLECTION_STATES)}")
        values: dict[str, Any] = {"status": status, "error": error, "updated_at": utcnow()}
        if chunks_total is not None:
            values["chunks_total"] = chunks_total
        if chunks_done is not None:
            values["chunks_done"] = chunks_done
        async with self.db.transaction() as session:
            await session.execute(update(Collection).where(Collection.id == collection_id).values(**values))

    async def delete_collections(self, team_id: str, collection_ids: Sequence[str]) -> list[str]:
        """Delete collections (a folder with everything in it) and their chunks from both indexes, all in
        one transaction (NotFound, and nothing deleted, when one of them is not the team's). Returns the
        files the deleted collections were imported from."""
        async with self.db.transaction() as session:
            for collection_id in dict.fromkeys(collection_ids):
                await self._collection(session, team_id, collection_id)
            ids = await collection_subtree(session, list(collection_ids))
            rows = [await self._collection(session, team_id, collection_id) for collection_id in ids]
            await purge_collection_rows(session, ids)
            await bump_index_version(session, sorted({row.dataset_id for row in rows}))
            for row in reversed(rows):
                await session.delete(row)
            return [row.file_id for row in rows if row.file_id]

    async def collection_facts(self, team_id: str, dataset_ids: Sequence[str]) -> list[CollectionFacts]:
        """What ``collectionFilterMatch`` reads of each collection of the datasets."""
        async with self.db.sessions() as session:
            rows = (
                await session.execute(
                    select(
                        Collection.id,
                        Collection.parent_id,
                        Collection.type,
                        Collection.tags,
                        Collection.created_at,
                    ).where(Collection.team_id == team_id, Collection.dataset_id.in_(list(dataset_ids)))
                )
            ).all()
        return [
            CollectionFacts(
                id=str(row[0]),
                parent_id=row[1],
                type=str(row[2]),
                tags=tuple(str(tag) for tag in row[3] or ()),
                created_at=row[4],
            )
            for row in rows
        ]
