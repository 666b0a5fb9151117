"""Stored files: the record of one upload and the file store as the domain sees it.

Imports no database library: ``fathom.chat`` types its uploads against :class:`FileStore`, and
``fathom.store.files.LocalFileStore`` (bytes on disk, rows in ``stored_files``) implements it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

DATASET_BUCKET = "dataset"


@dataclass(frozen=True)
class StoredFileRecord:
    id: str
    team_id: str
    name: str
    content_type: str
    size: int
    sha256: str
    bucket: str
    created_at: datetime


class StorageQuotaExceeded(Exception):
    """The team's stored files would be more than its quota with this one."""

    def __init__(self, used: int, size: int, quota: int) -> None:
        self.used, self.size, self.quota = used, size, quota
        super().__init__(
            f"the team stores {used} bytes of files and may store {quota}; this file ({size} bytes) "
            "would exceed that: delete files (chats, collections) or raise FATHOM_TEAM_STORAGE_QUOTA_BYTES"
        )


class FileStore(Protocol):
    """Uploads kept for a team: saved (within its quota), renamed, read back, deleted by app and chat."""

    async def save(
        self,
        team_id: str,
        name: str,
        data: bytes,
        *,
        content_type: str = "application/octet-stream",
        bucket: str = DATASET_BUCKET,
        member_id: str | None = None,
        app_id: str | None = None,
        chat_id: str | None = None,
    ) -> StoredFileRecord: ...
    async def rename(self, file_id: str, name: str) -> None: ...
    async def read(self, file_id: str, team_id: str | None = None) -> tuple[StoredFileRecord, bytes]: ...
    async def delete_files(
        self,
        team_id: str,
        *,
        bucket: str,
        app_id: str,
        chat_ids: Sequence[str] | None = None,
        names: Sequence[str] | None = None,
    ) -> int: ...
