"""A knowledge base's collection tags: create, rename, delete, list, usage, put on collections."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from fathom.datasets.errors import CollectionMissing, TagExists, TagMissing
from fathom.store.knowledge import SqlTagRepository, TagRecord
from fathom.store.protocols import Conflict, NotFound


class TagService:
    def __init__(self, tags: SqlTagRepository) -> None:
        self.tags = tags

    async def create(self, team_id: str, dataset_id: str, name: str) -> TagRecord:
        """A new tag; a name the knowledge base has is refused (``TagExists``)."""
        try:
            return await self.tags.create_tag(team_id, dataset_id, name)
        except Conflict:
            raise TagExists() from None

    async def rename(self, team_id: str, dataset_id: str, tag_id: str, name: str) -> None:
        """Rename the tag, also on every collection carrying it."""
        try:
            await self.tags.rename_tag(team_id, dataset_id, tag_id, name)
        except Conflict:
            raise TagExists() from None
        except NotFound:
            raise TagMissing() from None

    async def delete(self, team_id: str, dataset_id: str, tag_id: str) -> None:
        """Delete the tag and take it off every collection."""
        try:
            await self.tags.delete_tag(team_id, dataset_id, tag_id)
        except NotFound:
            raise TagMissing() from None

    async def list_tags(
        self, team_id: str, dataset_id: str, *, search: str = "", offset: int = 0, limit: int | None = None
    ) -> tuple[list[TagRecord], int]:
        """A page of the tags, newest first (``search``: part of the name, any case), and their count."""
        return await self.tags.list_tags(team_id, dataset_id, search=search, offset=offset, limit=limit)

    async def usage(self, team_id: str, dataset_id: str) -> list[tuple[str, list[str]]]:
        """Each tag carried by a collection: (tag id, the ids of the collections carrying it)."""
        return await self.tags.tag_usage(team_id, dataset_id)

    async def names(self, team_id: str, dataset_id: str, tag_ids: Sequence[str]) -> list[str]:
        """The names of the tags ``tag_ids`` names, in order, once each (a deleted tag is left out)."""
        names: list[str] = []
        for tag_id in dict.fromkeys(tag_ids):
            with contextlib.suppress(NotFound):
                names.append((await self.tags.get_tag(team_id, dataset_id, tag_id)).tag)
        return names

    async def put_on(
        self, team_id: str, dataset_id: str, tag: str, add_to: Sequence[str], remove_from: Sequence[str]
    ) -> None:
        """Put the tag (an id, else a name: a new name becomes a tag) on ``add_to`` and take it off
        ``remove_from``; every collection must be the knowledge base's, else nothing changes."""
        name = tag
        with contextlib.suppress(NotFound):  # an id; else a name
            name = (await self.tags.get_tag(team_id, dataset_id, tag)).tag
        try:
            await self.tags.set_tag_on(team_id, dataset_id, name, add_to, remove_from)
        except NotFound as exc:
            raise CollectionMissing(f"collectionIds: {exc}") from None
