"""Uploaded files: bytes in a directory (content-addressed), metadata in ``stored_files``.

Identical uploads share one copy on disk, so a copy goes only when no row names it any more. Saving
commits the row before it makes sure the bytes are there; deleting takes the bytes aside, counts the
rows that still name them, and puts them back if one does. Whatever the order two replicas do this in
on one shared directory, a row never names bytes that are gone.

A team may keep ``team_quota_bytes`` of files (the sum of its rows' sizes; 0 = no limit): a save first
records its row, then sums, and takes its row back when the sum is over, so racing uploads never end
over the quota together.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import delete, func, select

from fathom.store.db import Database
from fathom.store.file_protocols import DATASET_BUCKET, StorageQuotaExceeded, StoredFileRecord
from fathom.store.models import Collection, StoredFile
from fathom.store.protocols import NotFound

_STORAGE_KEY = re.compile(r"[0-9a-f]{2}/[0-9a-f]{64}")


def _record(row: StoredFile) -> StoredFileRecord:
    return StoredFileRecord(
        row.id, row.team_id, row.name, row.content_type, row.size, row.sha256, row.bucket, row.created_at
    )


class LocalFileStore:
    """Files under ``root`` named by their SHA-256; identical uploads share one copy on disk."""

    def __init__(self, db: Database, root: Path, *, team_quota_bytes: int = 0) -> None:
        self.db = db
        self.root = root
        self.team_quota_bytes = team_quota_bytes

    def _path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest

    def _blob(self, storage_key: str) -> Path:
        """The bytes of a row; a storage key that is not a digest path (never written so) names none."""
        if not _STORAGE_KEY.fullmatch(storage_key):
            raise NotFound("file not found")
        return self.root / storage_key

    def _write(self, digest: str, data: bytes) -> None:
        path = self._path(digest)
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)  # atomic: a crash never leaves half a file under the final name

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
    ) -> StoredFileRecord:
        """Store ``data`` for the team (:class:`StorageQuotaExceeded` when it would be over its quota)."""
        digest = hashlib.sha256(data).hexdigest()
        async with self.db.transaction() as session:  # the row first: see the module doc
            row = StoredFile(
                team_id=team_id,
                member_id=member_id,
                app_id=app_id,
                chat_id=chat_id,
                bucket=bucket,
                name=name,
                content_type=content_type,
                size=len(data),
                sha256=digest,
                storage_key=f"{digest[:2]}/{digest}",
            )
            session.add(row)
            await session.flush()
            record = _record(row)
        if self.team_quota_bytes:
            used = await self.team_usage(team_id)
            if used > self.team_quota_bytes:
                await self._delete_rows([StoredFile.id == record.id])
                raise StorageQuotaExceeded(used - len(data), len(data), self.team_quota_bytes)
        try:
            self._write(digest, data)
        except OSError:
            await self._delete_rows([StoredFile.id == record.id])
            raise
        return record

    async def team_usage(self, team_id: str) -> int:
        """Bytes of the team's stored files (each row counts, shared copies or not)."""
        async with self.db.sessions() as session:
            total = await session.scalar(
                select(func.coalesce(func.sum(StoredFile.size), 0)).where(StoredFile.team_id == team_id)
            )
        return int(total or 0)

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
        return _record(row), self._blob(row.storage_key).read_bytes()

    async def delete_files(
        self,
        team_id: str,
        *,
        bucket: str,
        app_id: str,
        chat_ids: Sequence[str] | None = None,
        names: Sequence[str] | None = None,
    ) -> int:
        """Delete the team's files of ``bucket`` and app (only those of ``chat_ids`` / named ``names``
        when given), and their bytes where no other row names them; how many rows went."""
        where: list[Any] = [StoredFile.team_id == team_id, StoredFile.bucket == bucket]
        where.append(StoredFile.app_id == app_id)
        if chat_ids is not None:
            where.append(StoredFile.chat_id.in_(list(chat_ids)))
        if names is not None:
            where.append(StoredFile.name.in_(list(names)))
        return await self._delete_rows(where)

    async def delete_unused(self, team_id: str, file_ids: Sequence[str]) -> int:
        """Delete these knowledge-base files of the team that no collection is imported from any more
        (their collections were deleted); how many."""
        if not file_ids:
            return 0
        used = select(Collection.file_id).where(Collection.file_id.in_(list(file_ids)))
        return await self._delete_rows(
            [
                StoredFile.team_id == team_id,
                StoredFile.bucket == DATASET_BUCKET,
                StoredFile.id.in_(list(file_ids)),
                StoredFile.id.not_in(used),
            ]
        )

    async def _delete_rows(self, where: list[Any]) -> int:
        async with self.db.transaction() as session:
            rows = (await session.execute(select(StoredFile.id, StoredFile.sha256).where(*where))).all()
            if rows:
                await session.execute(delete(StoredFile).where(StoredFile.id.in_([r[0] for r in rows])))
        for digest in {r[1] for r in rows}:
            await self._release(digest)
        return len(rows)

    async def _release(self, digest: str) -> None:
        """Remove the bytes of ``digest`` unless a row still names them (see the module doc)."""
        path = self._path(digest)
        aside = path.with_name(f"{digest}.deleting-{secrets.token_hex(4)}")
        try:
            os.replace(path, aside)
        except FileNotFoundError:
            return
        async with self.db.sessions() as session:
            named = await session.scalar(
                select(func.count()).select_from(StoredFile).where(StoredFile.sha256 == digest)
            )
        if named:
            os.replace(aside, path)
        else:
            aside.unlink(missing_ok=True)
