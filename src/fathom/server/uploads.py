"""What every upload route checks: the caller's uploads a minute, and the names it sends.

- ``FATHOM_UPLOAD_RATE_PER_MINUTE`` uploads a minute per caller (a member's console session, an API key
  by its own identity, a share-link visitor by link and uid), counted in the database so the limit holds
  across replicas; one more is a 429 ``tooManyRequests`` with ``Retry-After``.
- The team's storage quota is the file store's (:class:`fathom.store.files.StorageQuotaExceeded`, a 413
  ``teamStorageExceeded`` through the error handlers).
- A file name, and an id that names a folder of a chat file's key (``chatId``, ``customUid``,
  ``outLinkUid``), is never ``.`` or ``..`` and holds no ``/``, ``\\``, NUL or other control character:
  a 400 naming the field.
"""

from __future__ import annotations

from fastapi import Request

from fathom.server.auth import AuthContext
from fathom.server.errors import ApiError
from fathom.server.routes.common import platform_of

RETRY_AFTER_S = 60


def member_or_key(auth: AuthContext) -> str:
    """The caller an upload counts against: the API key itself, else the signed-in member."""
    return f"key:{auth.api_key_id}" if auth.api_key_id else f"member:{auth.member_id}"


def visitor(link_id: str, uid: str) -> str:
    """A share-link visitor as an upload caller."""
    return f"visitor:{link_id}:{uid}"


async def admit_upload(request: Request, caller: str) -> None:
    """Count one upload of ``caller``; 429 when it is more than the setting allows in a minute."""
    platform = platform_of(request)
    limit = platform.settings.upload_rate_per_minute
    if not await platform.admit_upload(caller):
        raise ApiError(
            429,
            "tooManyRequests",
            f"uploads: at most {limit} a minute for each caller (FATHOM_UPLOAD_RATE_PER_MINUTE); "
            f"wait {RETRY_AFTER_S} seconds and try again",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )


def name_problem(value: str) -> str | None:
    """Why ``value`` may not be a file name or a folder of a key (None when it may)."""
    if value in (".", ".."):
        return f"may not be {value!r}"
    if "/" in value or "\\" in value:
        return "may not hold '/' or '\\' (send the name alone, without a path)"
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "may not hold NUL or other control characters"
    return None


def check_file_name(name: str, field: str) -> str:
    """``name`` when it is a plain file name, else the 400 naming ``field``."""
    problem = name_problem(name)
    if problem:
        raise ApiError(400, "invalidParams", f"{field}: the file name {problem}")
    return name
