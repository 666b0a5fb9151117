"""Files uploaded into a chat (spec §6): stored in the platform's file store under FastGPT's key layout
``chat/app/{appId}/{uid}/{chatId}/{fileId}-{filename}`` and read back through their signed preview link.

The key names the stored row (``fileId``) and the row keeps the whole key as its name, so a signed link
reads only the file it was made for; a key of another team's file, a made-up key and a missing file
are all :class:`~fathom.store.protocols.NotFound`. The row also records its app and chat: a chat's files
are deleted with the chat, an app's with the app.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from fathom.security.files import PreviewUrlSigner
from fathom.security.files.signing import PREVIEW_PATH
from fathom.store.protocols import FileStore, NotFound, StoredFileRecord

CHAT_BUCKET = "chat"
MAX_CHAT_FILE_BYTES = 20 * 1024 * 1024  # a chat file, in bytes (FastGPT's default upload limit)
MAX_FILENAME_LENGTH = 200


@dataclass(frozen=True)
class UploadedChatFile:
    key: str
    preview_url: str
    record: StoredFileRecord


class ChatFiles:
    """Saves chat uploads and opens them by their signed preview links."""

    def __init__(self, store: FileStore, signer: PreviewUrlSigner) -> None:
        self.store = store
        self.signer = signer

    async def save(
        self,
        team_id: str,
        *,
        app_id: str,
        uid: str,
        chat_id: str,
        filename: str,
        data: bytes,
        content_type: str,
        member_id: str | None = None,
    ) -> UploadedChatFile:
        """Store ``data`` for this app, user and chat; its key and a preview link signed now."""
        prefix = f"chat/app/{app_id}/{uid}/{chat_id}"
        record = await self.store.save(
            team_id,
            prefix,
            data,
            content_type=content_type,
            bucket=CHAT_BUCKET,
            member_id=member_id,
            app_id=app_id,
            chat_id=chat_id,
        )
        key = f"{prefix}/{record.id}-{filename}"
        await self.store.rename(record.id, key)
        return UploadedChatFile(key, self.signer.sign(key), record)

    async def open_key(self, key: str, team_id: str | None = None) -> tuple[StoredFileRecord, bytes]:
        """The row and bytes of the chat file ``key`` (``NotFound`` for any key that names none)."""
        file_id = key.rsplit("/", 1)[-1].split("-", 1)[0]
        if not key.startswith("chat/") or not file_id:
            raise NotFound("file not found")
        try:
            record, data = await self.store.read(file_id, team_id)
        except (NotFound, OSError):
            raise NotFound("file not found") from None
        if record.bucket != CHAT_BUCKET or record.name != key:
            raise NotFound("file not found")
        return record, data

    async def delete_chats(self, team_id: str, app_id: str, chat_ids: Sequence[str] | None = None) -> int:
        """Delete the files of these chats of the app (None: of every chat of the app); how many."""
        return await self.store.delete_files(team_id, bucket=CHAT_BUCKET, app_id=app_id, chat_ids=chat_ids)

    async def delete_keys(self, team_id: str, app_id: str, chat_id: str, keys: Iterable[str]) -> int:
        """Delete the chat's files named by ``keys`` (keys of other chats or apps name none); how many."""
        names = [key for key in keys if key.startswith("chat/")]
        if not names:
            return 0
        return await self.store.delete_files(
            team_id, bucket=CHAT_BUCKET, app_id=app_id, chat_ids=[chat_id], names=names
        )

    def is_preview_url(self, url: str) -> bool:
        """True when ``url`` is one of this server's preview links (the run reads it from the store)."""
        parts, base = urlsplit(url), urlsplit(self.signer.base_url)
        return (parts.scheme, parts.netloc, parts.path) == (
            base.scheme,
            base.netloc,
            f"{base.path}{PREVIEW_PATH}",
        )

    async def open_preview(self, url: str, team_id: str | None = None) -> tuple[StoredFileRecord, bytes]:
        """A signed link's file: ``PreviewUrlError`` for a bad or expired signature, ``NotFound`` else."""
        return await self.open_key(self.signer.verify(url), team_id)


def filename_of(key: str, record: StoredFileRecord) -> str:
    """The name the user uploaded (the key's last segment without the file id)."""
    return key.rsplit("/", 1)[-1].removeprefix(f"{record.id}-")


def file_keys(values: Iterable[object]) -> set[str]:
    """The stored chat files a chat item's value names (its ``file`` parts' keys)."""
    keys = set()
    for value in values:
        file = value.get("file") if isinstance(value, dict) else None
        key = file.get("key") if isinstance(file, dict) else None
        if isinstance(key, str) and key:
            keys.add(key)
    return keys


__all__ = ["CHAT_BUCKET", "MAX_CHAT_FILE_BYTES", "ChatFiles", "UploadedChatFile", "file_keys", "filename_of"]
