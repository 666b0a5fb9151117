"""A knowledge base's tags (FastGPT's ``dataset_collection_tags``) and the names collections carry.

Collections keep their tags' names (``collections.tags``); each name has one ``dataset_tags`` row with
the id FastGPT's tag routes speak of. Renaming or deleting a tag rewrites the collections that carry it,
in the same transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.db import Database
from fathom.store.models import Collection, DatasetTag, utcnow
from fathom.store.protocols import Conflict, NotFound


@dataclass(frozen=True)
class TagRecord:
    id: str
    team_id: str
    dataset_id: str
    tag: str
    created_at: datetime


def _record(row: DatasetTag) -> TagRecord:
    return TagRecord(
        id=row.id, team_id=row.team_id, dataset_id=row.dataset_id, tag=row.tag, created_at=row.created_at
    )


async def ensure_tags(session: AsyncSession, team_id: str, dataset_id: str, names: Sequence[str]) -> None:
    """Give every name a tag row of the dataset (FastGPT creates the tags a collection names)."""
    wanted = list(dict.fromkeys(name for name in names if name))
    if not wanted:
        return
    known = set(
        await session.scalars(
            select(DatasetTag.tag).where(DatasetTag.dataset_id == dataset_id, DatasetTag.tag.in_(wanted))
        )
    )
    for name in wanted:
        if name not in known:
            session.add(DatasetTag(team_id=team_id, dataset_id=dataset_id, tag=name))
    await session.flush()


async def _rewrite_collections(session: AsyncSession, dataset_id: str, old: str, new: str | None) -> None:
    """Replace (or, with ``new`` None, remove) the name ``old`` on the dataset's collections."""
    rows = (
        await session.execute(
            select(Collection.id, Collection.tags).where(Collection.dataset_id == dataset_id)
        )
    ).all()
    for collection_id, tags in rows:
        names = [str(tag) for tag in tags or ()]
        if old not in names:
            continue
        changed = [new if name == old else name for name in names if new is not None or name != old]
        row = await session.get(Collection, collection_id)
        if row is not None:
            row.tags = list(dict.fromkeys(name for name in changed if name))
            row.updated_at = utcnow()


async def delete_tags_of(session: AsyncSession, dataset_ids: Sequence[str]) -> None:
    """Remove the tags of datasets being deleted (inside the caller's transaction)."""
    await session.execute(delete(DatasetTag).where(DatasetTag.dataset_id.in_(list(dataset_ids))))


class SqlTagRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create_tag(self, team_id: str, dataset_id: str, tag: str) -> TagRecord:
        """A new tag; Conflict when the dataset has one of that name."""
        async with self.db.transaction() as session:
            exists = await session.scalar(
                select(DatasetTag.id).where(DatasetTag.dataset_id == dataset_id, DatasetTag.tag == tag)
            )
            if exists is not None:
                raise Conflict(f"Tag already exists: {tag!r} is tag {exists}")
            row = DatasetTag(team_id=team_id, dataset_id=dataset_id, tag=tag)
            session.add(row)
            await session.flush()
            return _record(row)

    async def _tag(self, session: AsyncSession, team_id: str, dataset_id: str, tag_id: str) -> DatasetTag:
        row = await session.get(DatasetTag, tag_id)
        if row is None or row.team_id != team_id or row.dataset_id != dataset_id:
            raise NotFound(f"Tag not found: knowledge base {dataset_id} has no tag {tag_id}")
        return row

    async def rename_tag(self, team_id: str, dataset_id: str, tag_id: str, tag: str) -> None:
        """Rename a tag and the collections carrying it; Conflict when another tag has the name."""
        async with self.db.transaction() as session:
            row = await self._tag(session, team_id, dataset_id, tag_id)
            if row.tag == tag:
                return
            exists = await session.scalar(
                select(DatasetTag.id).where(DatasetTag.dataset_id == dataset_id, DatasetTag.tag == tag)
            )
            if exists is not None:
                raise Conflict(f"Tag already exists: {tag!r} is tag {exists}")
            old, row.tag = row.tag, tag
            await _rewrite_collections(session, dataset_id, old, tag)

    async def delete_tag(self, team_id: str, dataset_id: str, tag_id: str) -> None:
        """Delete a tag and take it off every collection."""
        async with self.db.transaction() as session:
            row = await self._tag(session, team_id, dataset_id, tag_id)
            await _rewrite_collections(session, dataset_id, row.tag, None)
            await session.delete(row)

    async def list_tags(
        self, team_id: str, dataset_id: str, *, search: str = "", offset: int = 0, limit: int | None = None
    ) -> tuple[list[TagRecord], int]:
        """The dataset's tags, newest first; ``search``: part of the name, any case."""
        where: list[Any] = [DatasetTag.team_id == team_id, DatasetTag.dataset_id == dataset_id]
        if search:
            where.append(func.lower(DatasetTag.tag).contains(search.lower()))
        async with self.db.sessions() as session:
            total = int(await session.scalar(select(func.count()).select_from(DatasetTag).where(*where)) or 0)
            query = (
                select(DatasetTag).where(*where).order_by(DatasetTag.created_at.desc(), DatasetTag.id.desc())
            )
            rows = await session.scalars(query.offset(offset).limit(limit) if limit is not None else query)
            return [_record(row) for row in rows], total

    async def get_tag(self, team_id: str, dataset_id: str, tag_id: str) -> TagRecord:
        async with self.db.sessions() as session:
            return _record(await self._tag(session, team_id, dataset_id, tag_id))

    async def tag_usage(self, team_id: str, dataset_id: str) -> list[tuple[str, list[str]]]:
        """Each tag carried by a collection: (tag id, the ids of the collections carrying it)."""
        tags, _ = await self.list_tags(team_id, dataset_id)
        ids = {tag.tag: tag.id for tag in tags}
        usage: dict[str, list[str]] = {}
        async with self.db.sessions() as session:
            rows = (
                await session.execute(
                    select(Collection.id, Collection.tags)
                    .where(Collection.team_id == team_id, Collection.dataset_id == dataset_id)
                    .order_by(Collection.created_at, Collection.id)
                )
            ).all()
        for collection_id, names in rows:
            for name in names or ():
                if name in ids:
                    usage.setdefault(ids[name], []).append(str(collection_id))
        return list(usage.items())

    async def set_tag_on(
        self, team_id: str, dataset_id: str, tag: str, add_to: Sequence[str], remove_from: Sequence[str]
    ) -> None:
        """Put the tag name on the collections ``add_to`` and take it off ``remove_from`` (FastGPT's
        ``addToCollections``), in one transaction; NotFound, and nothing changed, when a collection is not
        the dataset's."""
        async with self.db.transaction() as session:
            await ensure_tags(session, team_id, dataset_id, [tag])
            for collection_id in dict.fromkeys([*add_to, *remove_from]):
                row = await session.get(Collection, collection_id)
                if row is None or row.team_id != team_id or row.dataset_id != dataset_id:
                    raise NotFound(f"collection {collection_id} not found in knowledge base {dataset_id}")
                names = [str(name) for name in row.tags or ()]
                if collection_id in add_to and tag not in names:
                    row.tags = [*names, tag]
                elif collection_id not in add_to and tag in names:
                    row.tags = [name for name in names if name != tag]
                else:
                    continue
                row.updated_at = utcnow()
