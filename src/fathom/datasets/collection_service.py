"""Collections of a knowledge base: create (and queue their ingestion), list with their queue places and
failures, find, edit (rename, tag, forbid, move within the folder tree), delete with their files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fathom.datasets.errors import InvalidDatasetRequest, RecordMissing
from fathom.datasets.ingest import IngestionService
from fathom.knowledge.parse import IMAGE_FORMATS, SUPPORTED_FORMATS, detect_format
from fathom.knowledge.parse.selector import SelectorError, css_to_xpath
from fathom.store.files import LocalFileStore
from fathom.store.knowledge import SqlDatasetRepository
from fathom.store.knowledge.training import SqlTrainingRepository, TrainingCounts
from fathom.store.protocols import CollectionRecord, NotFound

FOLDER_DEPTH_MAX = 100


@dataclass(frozen=True)
class CollectionToCreate:
    """A collection to create; its source is ``raw_text``, ``raw_link`` or ``file_id`` (none: a virtual
    collection or folder). ``tags``, ``created_at``, ``external_file_id``: FastGPT's fields as sent."""

    name: str
    type: str
    training_type: str = "chunk"
    chunk_settings: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    parent_id: str | None = None
    tags: Sequence[str] = ()
    created_at: datetime | None = None
    external_file_id: str | None = None
    raw_text: str | None = None
    raw_link: str | None = None
    file_id: str | None = None


@dataclass(frozen=True)
class CollectionChanges:
    """An edit of a collection; None leaves a field as it is. ``move``: ``parent_id`` is the new folder
    (None: the root)."""

    name: str | None = None
    tags: Sequence[str] | None = None
    forbid: bool | None = None
    created_at: datetime | None = None
    move: bool = False
    parent_id: str | None = None


@dataclass(frozen=True)
class ListedCollection:
    """A collection of a listing, its place in the ingestion queue (None: not waiting) and how many of
    its training items the model failed on."""

    collection: CollectionRecord
    queue_position: int | None
    failed: int


def check_web_page_selector(selector: Any, field_name: str) -> None:
    """Refuse a ``webPageSelector`` that is not a CSS selector this server can apply (``field_name``
    prefixes the message: where the selector was sent)."""
    try:
        css_to_xpath(selector) if isinstance(selector, str) else None
    except SelectorError as exc:
        raise InvalidDatasetRequest(f"{field_name}{exc}") from None
    if not isinstance(selector, str):
        raise InvalidDatasetRequest(f"{field_name}webPageSelector: must be a CSS selector string")


def check_file_format(name: str, field_name: str) -> None:
    """Refuse a file whose name says a format this server cannot parse."""
    if detect_format(name) not in SUPPORTED_FORMATS and not is_image_file(name):
        kinds = ", ".join(SUPPORTED_FORMATS + IMAGE_FORMATS)
        raise InvalidDatasetRequest(f"{field_name}: {name!r} has an unsupported type; supported: {kinds}")


def is_image_file(name: str) -> bool:
    """An image file: imported as an image collection (described by the vision model)."""
    return detect_format(name) in IMAGE_FORMATS


class CollectionService:
    def __init__(
        self,
        datasets: SqlDatasetRepository,
        training: SqlTrainingRepository,
        ingestion: IngestionService,
        files: LocalFileStore,
    ) -> None:
        self.datasets = datasets
        self.training = training
        self.ingestion = ingestion
        self.files = files

    async def find(self, team_id: str, collection_id: str) -> CollectionRecord:
        """The team's collection (another team's is NotFound)."""
        return await self.datasets.get_collection(team_id, collection_id)

    async def folder(self, team_id: str, dataset_id: str, parent_id: str | None) -> str | None:
        """``parent_id`` when it is a folder collection of the knowledge base (None: the root)."""
        if not parent_id:
            return None
        folder = await self._folder_or_none(team_id, parent_id)
        if folder is None or folder.dataset_id != dataset_id or folder.type != "folder":
            raise InvalidDatasetRequest(
                f"parentId: {parent_id} is not a folder of knowledge base {dataset_id}; "
                'send null or "" for the root'
            )
        return folder.id

    async def _folder_or_none(self, team_id: str, collection_id: str) -> CollectionRecord | None:
        try:
            return await self.datasets.get_collection(team_id, collection_id)
        except NotFound:
            return None

    async def _store(self, team_id: str, dataset_id: str, new: CollectionToCreate) -> CollectionRecord:
        return await self.datasets.create_collection(
            team_id,
            dataset_id,
            new.name,
            type=new.type,
            training_type=new.training_type,
            chunk_settings=new.chunk_settings,
            metadata=new.metadata,
            parent_id=new.parent_id,
            tags=new.tags,
            created_at=new.created_at,
            external_file_id=new.external_file_id,
            raw_text=new.raw_text,
            raw_link=new.raw_link,
            file_id=new.file_id,
        )

    async def create_empty(self, team_id: str, dataset_id: str, new: CollectionToCreate) -> CollectionRecord:
        """A virtual collection (ready at once, rows are pushed into it) or a folder."""
        collection = await self._store(team_id, dataset_id, new)
        await self.datasets.set_collection_state(collection.id, "ready")
        return collection

    async def import_source(
        self, team_id: str, dataset_id: str, new: CollectionToCreate, *, bill_id: str | None
    ) -> tuple[CollectionRecord, int]:
        """Store the collection and queue its ingestion; with it the number of chunks queued when the text
        is at hand (a text import), else 0 (a link or file is parsed by the job)."""
        collection = await self._store(team_id, dataset_id, new)
        insert_len = await self.ingestion.count_chunks(collection, new.raw_text) if new.raw_text else 0
        await self.ingestion.enqueue(collection, bill_id=bill_id)
        return collection, insert_len

    async def save_file(
        self, team_id: str, name: str, content: bytes, *, content_type: str, member_id: str | None
    ) -> str:
        """Store an uploaded file to import (it counts toward the team's storage quota); its id."""
        stored = await self.files.save(team_id, name, content, content_type=content_type, member_id=member_id)
        return stored.id

    async def list_collections(
        self,
        team_id: str,
        dataset_id: str,
        *,
        offset: int,
        limit: int,
        search: str,
        parent_id: str | None,
        folders_only: bool,
        any_tag: Sequence[str],
    ) -> tuple[list[ListedCollection], int]:
        """A page of the knowledge base's collections and how many there are (see
        ``SqlDatasetRepository.list_collections`` for the filters)."""
        items, total = await self.datasets.list_collections(
            team_id,
            dataset_id,
            offset=offset,
            limit=limit,
            search=search,
            parent_id=parent_id,
            folders_only=folders_only,
            any_tag=any_tag,
        )
        waiting = any(item.status == "waiting" for item in items)
        positions = await self.ingestion.queue_positions() if waiting else {}
        counts = await self.training.counts([item.id for item in items])
        listed = [
            ListedCollection(
                item, positions.get(item.id), counts[item.id].failed_total if item.id in counts else 0
            )
            for item in items
        ]
        return listed, total

    async def training_counts(self, collection_id: str) -> TrainingCounts | None:
        """The collection's training items by mode, waiting and failed (None: it has none)."""
        return (await self.training.counts([collection_id])).get(collection_id)

    async def by_external_file(self, team_id: str, dataset_id: str, external_file_id: str) -> str:
        """The id of the knowledge base's collection with ``external_file_id``."""
        found = await self.datasets.find_external_file(team_id, dataset_id, external_file_id)
        if found is None:
            raise RecordMissing(
                "file",
                f"externalFileId: knowledge base {dataset_id} has no collection with externalFileId "
                f"{external_file_id!r}",
            )
        return found

    async def update(self, team_id: str, collection: CollectionRecord, changes: CollectionChanges) -> None:
        """Apply ``changes``; a move goes only into a folder of the same knowledge base that is not the
        collection itself or inside it."""
        stored: dict[str, Any] = {}
        if changes.name:
            stored["name"] = changes.name
        if changes.tags is not None:
            stored["tags"] = changes.tags
        if changes.forbid is not None:
            stored["forbid"] = changes.forbid
        if changes.created_at is not None:
            stored["created_at"] = changes.created_at
        if changes.move:
            parent = changes.parent_id
            stored["parent_id"] = await self._move_target(team_id, collection, parent) if parent else None
        if stored:
            await self.datasets.update_collection(team_id, collection.id, **stored)

    async def _move_target(self, team_id: str, collection: CollectionRecord, parent: str) -> str:
        folder_id = await self.folder(team_id, collection.dataset_id, parent)
        assert folder_id is not None
        ancestor: CollectionRecord | None = await self.datasets.get_collection(team_id, folder_id)
        for _ in range(FOLDER_DEPTH_MAX):
            if ancestor is None:
                break
            if ancestor.id == collection.id:
                raise InvalidDatasetRequest("parentId: a folder cannot move into itself or its subfolders")
            ancestor = (
                await self.datasets.get_collection(team_id, ancestor.parent_id)
                if ancestor.parent_id
                else None
            )
        return folder_id

    async def delete(self, team_id: str, collection_ids: Sequence[str]) -> None:
        """Delete the collections (a folder with everything in it), their rows and both indexes in one
        transaction, and the files they were imported from that nothing else uses."""
        files = await self.datasets.delete_collections(team_id, collection_ids)
        if files:  # the team's storage quota goes down
            await self.files.delete_unused(team_id, files)
