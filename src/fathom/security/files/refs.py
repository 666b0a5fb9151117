"""File references, identities, URL checks and key ownership for workflow file contexts (spec §6.5)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol
from urllib.parse import unquote, urlsplit, urlunsplit

# Error strings, verbatim from FastGPT.
KEY_NOT_IN_WORKFLOW = "Workflow file key does not belong to the current workflow"
INVALID_QUERY_FILE_URL = "Invalid workflow file URL"
QUERY_FILE_UNAVAILABLE = "Workflow query file is unavailable"
NOT_REGISTERED = "Workflow file is not registered in the current context"
CHILD_PRIVATE_NOT_IN_PARENT = "Child workflow private file is not registered in the parent context"
INVALID_CHILD_FILE_URL = "Invalid child workflow file URL"
CHILD_FILE_NOT_SELECTED = "Child workflow file is not selected in its file context"
CHILD_NOT_SELECTED_FOR_SOURCE = "Workflow file is not selected for the child context"
CHILD_PRIVATE_NOT_INHERITED = "Child workflow private file must be inherited from parent context"
PARENT_IDENTITY_UNAVAILABLE = "Parent workflow file identity is unavailable"

PREVIEW_URL_EXPIRES_SECONDS = 2 * 60 * 60
"""Signed preview URLs of private files are valid 2 h (``WORKFLOW_FILE_URL_EXPIRED_HOURS``)."""

RegistrationSource = Literal["query", "history", "variable", "interactive", "plugin"]


class WorkflowFileError(Exception):
    """A user-facing file-context error; the message is one of the constants above."""


@dataclass(frozen=True)
class FileScope:
    """Who a private chat file belongs to: the chat source (app), the user and the chat."""

    source_type: str
    source_id: str
    uid: str
    chat_id: str


@dataclass(frozen=True)
class ChatObjectSource:
    """A private file in Fathom's storage, identified by its object key."""

    object_key: str
    type: Literal["chatObject"] = "chatObject"


@dataclass(frozen=True)
class ExternalHttpSource:
    """A file behind an absolute http(s) URL (read later through the egress guard)."""

    url: str
    type: Literal["externalHttp"] = "externalHttp"


@dataclass(frozen=True, eq=False)
class WorkflowFileRef:
    """A registered file: the URL models see (``model_url``) and where the bytes really come from."""

    name: str
    type: str
    model_url: str
    source: ChatObjectSource | ExternalHttpSource


@dataclass(frozen=True)
class FileLimits:
    """Per-run file quota: how many files a (child) workflow may see and how large each may be."""

    max_file_amount: int
    max_bytes_per_file: int = 100 * 1024 * 1024


@dataclass(frozen=True)
class FileSource:
    """Where to read a registered file from (storage key or external URL); reading is done elsewhere."""

    kind: Literal["internal", "external"]
    name: str
    max_bytes: int
    object_key: str | None = None
    url: str | None = None


class FileOwnerLookup(Protocol):
    """Tells who owns a stored private file (``None`` when the key is unknown)."""

    async def owner_of(self, key: str) -> FileScope | None: ...


UrlDomainValidator = Callable[[str], bool]


def is_absolute_http_url(value: object) -> bool:
    """Only absolute ``http://`` / ``https://`` URLs with a host (no relative or ``//host`` forms)."""
    if not isinstance(value, str):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc) and value.lower().startswith(parts.scheme)


def external_identity(url: str) -> str:
    """``external:{url without #fragment}``."""
    parts = urlsplit(url)
    return "external:" + urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))


def chat_identity(key: str) -> str:
    """``chat:{object key}``."""
    return f"chat:{key}"


def file_name_from_url(url: str) -> str:
    """The last path segment of a URL, decoded (``file`` when there is none)."""
    try:
        return posixpath.basename(unquote(urlsplit(url).path)) or "file"
    except ValueError:
        return "file"


def file_key(file: Any) -> str | None:
    """The object key of a file value (a mapping with a non-empty string ``key``), else ``None``."""
    if isinstance(file, Mapping):
        key = file.get("key")
        if isinstance(key, str) and key:
            return key
    return None


def file_url(file: Any) -> str | None:
    """The URL of a file value: the string itself or the mapping's ``url``."""
    if isinstance(file, str):
        return file
    if isinstance(file, Mapping) and isinstance(file.get("url"), str):
        return str(file["url"])
    return None


class FileUrlWhitelist:
    """Spec §6.4: empty list allows every host; else the host must equal a listed domain."""

    def __init__(self, domains: Iterable[str] = ()) -> None:
        self.domains = frozenset(d.strip().lower() for d in domains if d.strip())

    def __call__(self, url: str) -> bool:
        if not self.domains:
            return True
        try:
            host = (urlsplit(url).hostname or "").lower()
        except ValueError:
            return True  # parse errors are allowed, as in FastGPT (later layers reject them)
        return host in self.domains


class ChatKeyOwnerLookup:
    """Owner from the key layout ``chat/{sourceType}/{sourceId}/{uid}/{chatId}/{filename}``.

    The legacy layout ``chat/{appId}/{uid}/{chatId}/{filename}`` is read as ``sourceType=app``.
    """

    def __init__(self, source_types: Iterable[str] = ("app", "skillEdit")) -> None:
        self.source_types = frozenset(source_types)

    async def owner_of(self, key: str) -> FileScope | None:
        return self.parse(key)

    def parse(self, key: str) -> FileScope | None:
        """The owner encoded in ``key``, or ``None`` when it is not a chat file key."""
        segments = key.split("/")
        if len(segments) < 5 or segments[0] != "chat" or ".." in segments:
            return None
        if segments[1] in self.source_types:
            source_type, rest = segments[1], segments[2:]
        else:
            source_type, rest = "app", segments[1:]
        if len(rest) < 4:
            return None
        source_id, uid, chat_id = (unquote(s) for s in rest[:3])
        filename = "/".join(s for s in rest[3:] if s)
        if not (source_id and uid and chat_id and filename):
            return None
        return FileScope(source_type, source_id, uid, chat_id)
