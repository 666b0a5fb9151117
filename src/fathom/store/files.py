"""Uploaded files: bytes in a directory (content-addressed), metadata in ``stored_files``."""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from fathom.store.db import Database
from fathom.store.models import StoredFile
from fathom.store.protocols import NotFound


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


class LocalFileStore:
    """Files under ``root`` named by their SHA-256; identical uploads share one copy on disk."""

    def __init__(self, db: Database, root: Path) -> None:
        self.db = db
        self.root = root

    def _path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest

    async def save(
        self,
        team_id: str,
        name: str,
        data: bytes,
        *,
        content_type: str = "application/octet-stream",
        bucket: str = "dataset",
        member_id: str | None = None,
    ) -> StoredFileRecord:
        digest = hashlib.sha256(data).hexdigest()
        path = self._path(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)  # atomic: a crash never leaves half a file under the final name
        async with self.db.transaction() as session:
            row = StoredFile(
                team_id=team_id,
                member_id=member_id,
                bucket=bucket,
                name=name,
                content_type=content_type,
                size=len(data),
                sha256=digest,
                storage_key=f"{digest[:2]}/{digest}",
            )
            session.add(row)
            await session.flush()
            return StoredFileRecord(
                row.id, team_id, name, content_type, len(data), digest, bucket, row.created_at
            )

    async def rename(self, file_id: str, name: str) -> None:
        """Give the stored file ``file_id`` a new name (a chat file's name is its key, which holds the id)."""
        async with self.db.transaction() as session:
            row = await session.get(StoredFile, file_id)
            if row is None:
                raise NotFound(f"file {file_id} not found")
            row.name = name

    async def read(self, file_id: str, team_id: str | None = None) -> tuple[StoredFileRecord, bytes]:
        async with self.db.sessions() as session:
            row = await session.get(StoredFile, file_id)
        if row is None or (team_id is not None and row.team_id != team_id):
            raise NotFound(f"file {file_id} not found")
        record = StoredFileRecord(
            row.id, row.team_id, row.name, row.content_type, row.size, row.sha256, row.bucket, row.created_at
        )
        return record, (self.root / row.storage_key).read_bytes()
