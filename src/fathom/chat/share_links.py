"""Share links (FastGPT's outLink): anyone holding a link's ``shareId`` chats with the app's published
version as a visitor named by their ``outLinkUid``, within the link's limits.

Before a visitor's chat (FastGPT ``authOutLinkChatStart`` + ``authOutLinkLimit``), in this order:
the link exists (``linkUnInvalid``), has not expired (``linkExpired``), has points left
(``outLinkUsedPointsExceed``: its chats' points reached ``maxUsagePoints``), the visitor is within
``QPM`` answered requests in the last minute (``outLinkOverFrequency``, counted in the database), and
the link's auth hook, when it has one, accepts the visitor: ``POST {hookUrl}/shareAuth/start`` with
``{token: outLinkUid, question}`` must answer ``{success: true, data?: {uid}}`` (``unAuthUser``
otherwise). Reading the share page or the visitor's history asks ``/shareAuth/init`` instead; after a
chat, ``/shareAuth/finish`` gets the node responses (its answer is ignored). Hook calls go through the
egress guard.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import string
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fathom.chat.errors import ChatError
from fathom.security import EgressDenied
from fathom.store.protocols import ShareLinkRecord, ShareLinkRepository, ShareLinkSettings

log = logging.getLogger("fathom.chat")

SHARE_SOURCE = "share"
SHARE_ID_LENGTH = 24
MAX_UID_BYTES = 255
_SHARE_ALPHABET = string.ascii_lowercase + string.digits  # FastGPT's outLink shareId alphabet
_UID_FORBIDDEN = set('|/"\\')
HOOK_TIMEOUT_S = 10.0


class ShareLinkRefused(ChatError):
    """A share-link visitor's request refused: FastGPT's outLink error and what to do about it."""


def _refused(status_text: str, http_status: int, message: str) -> ShareLinkRefused:
    return ShareLinkRefused(message, http_status=http_status, status_text=status_text)


def _new_share_id() -> str:
    """A new shareId: 24 lowercase letters and digits, as FastGPT makes them."""
    return "".join(secrets.choice(_SHARE_ALPHABET) for _ in range(SHARE_ID_LENGTH))


@dataclass(frozen=True)
class ShareVisit:
    """An admitted visitor of a link: ``uid`` is their id (the hook's answer, when there is a hook)."""

    link: ShareLinkRecord
    uid: str


def _check_uid(uid: str) -> str:
    """FastGPT's rule for a visitor id: at most 255 bytes, none of ``| / " \\``; and, as it names a
    folder of the visitor's chat file keys, neither ``.`` nor ``..`` and no control character."""
    if (
        len(uid.encode()) > MAX_UID_BYTES
        or any(c in _UID_FORBIDDEN or ord(c) < 32 or ord(c) == 127 for c in uid)
        or uid in (".", "..")
    ):
        raise _refused(
            "invalidParams",
            400,
            'outLinkUid: at most 255 bytes, not "." or "..", without | / " \\ or control characters',
        )
    return uid


def _check_expiry(link: ShareLinkRecord) -> None:
    if link.expired_time is not None and link.expired_time <= datetime.now(UTC):
        expired = link.expired_time.isoformat().replace("+00:00", "Z")
        raise _refused("linkExpired", 403, f"the link expired at {expired} (limit.expiredTime)")


class ShareLinkService:
    """Share links of apps, and admitting their visitors."""

    def __init__(
        self,
        links: ShareLinkRepository,
        http_client: Callable[..., Any] | None = None,
        parse_url: Callable[[str], Any] | None = None,
    ) -> None:
        self.links = links
        self._http_client = http_client  # the egress guard's client factory
        self._parse_url = parse_url  # the egress guard's URL check (raises EgressDenied)
        self._tasks: set[asyncio.Task[None]] = set()

    # -- the owner's side ---------------------------------------------------------------------------

    async def create(
        self, team_id: str, app_id: str, member_id: str, link_type: str, settings: ShareLinkSettings
    ) -> ShareLinkRecord:
        return await self.links.create_link(team_id, app_id, member_id, _new_share_id(), link_type, settings)

    def check_hook_url(self, url: str) -> None:
        """A 400 when the egress guard would never fetch the auth hook ``url`` (``limit.hookUrl``)."""
        if self._parse_url is None:
            return
        try:
            self._parse_url(url)
        except EgressDenied as exc:
            raise ChatError(f"limit.hookUrl: {exc}", http_status=400, status_text="invalidParams") from None

    async def list_links(self, team_id: str, app_id: str, link_type: str | None) -> list[ShareLinkRecord]:
        return await self.links.list_links(team_id, app_id, link_type)

    async def find(self, share_id: str) -> ShareLinkRecord | None:
        """The link with this shareId, if there is one (no visitor checks: the share page's headers)."""
        return await self.links.find_by_share_id(share_id)

    async def get(self, team_id: str, link_id: str) -> ShareLinkRecord:
        return await self.links.get_link(team_id, link_id)

    async def update(self, team_id: str, link_id: str, settings: ShareLinkSettings) -> ShareLinkRecord:
        return await self.links.update_link(team_id, link_id, settings)

    async def delete(self, team_id: str, link_id: str) -> None:
        await self.links.delete_link(team_id, link_id)

    # -- the visitor's side -------------------------------------------------------------------------

    async def _valid_link(self, share_id: str | None, out_link_uid: str | None) -> ShareLinkRecord:
        link = await self.links.find_by_share_id(share_id) if share_id else None
        if link is None:
            raise _refused("linkUnInvalid", 404, f"shareId: no share link {share_id!r}")
        if not out_link_uid:
            raise _refused("linkUnInvalid", 400, "outLinkUid: is required with shareId (the visitor's id)")
        _check_uid(out_link_uid)
        return link

    async def admit_visit(self, share_id: str | None, out_link_uid: str | None) -> ShareVisit:
        """A visitor opening the share page or reading their history (FastGPT ``authOutLink``)."""
        link = await self._valid_link(share_id, out_link_uid)
        assert out_link_uid is not None
        uid = await self._hook(link, "init", {"token": out_link_uid}) if link.hook_url else out_link_uid
        return ShareVisit(link, uid)

    async def admit_upload(self, share_id: str | None, out_link_uid: str | None) -> ShareVisit:
        """A visitor uploading a chat file: a link that has not expired, and its hook's ``init``."""
        visit = await self.admit_visit(share_id, out_link_uid)
        _check_expiry(visit.link)
        return visit

    async def admit_chat(self, share_id: str | None, out_link_uid: str | None, question: str) -> ShareVisit:
        """A visitor about to chat: every limit of the link, then its hook (see the module doc)."""
        link = await self._valid_link(share_id, out_link_uid)
        assert out_link_uid is not None
        _check_expiry(link)
        if link.max_usage_points >= 0 and link.usage_points >= link.max_usage_points:
            raise _refused(
                "outLinkUsedPointsExceed",
                403,
                f"the link has used {link.usage_points:g} of its "
                f"{link.max_usage_points:g} points (limit.maxUsagePoints)",
            )
        if link.qpm > 0 and not await self.links.count_hit(link.id, out_link_uid, link.qpm):
            raise _refused(
                "outLinkOverFrequency",
                429,
                f"this visitor may send {link.qpm} requests a minute "
                "(limit.QPM); wait a minute and try again",
            )
        if not link.hook_url:
            return ShareVisit(link, out_link_uid)
        uid = await self._hook(link, "start", {"token": out_link_uid, "question": question})
        return ShareVisit(link, uid)

    async def _hook(self, link: ShareLinkRecord, step: str, body: dict[str, Any]) -> str:
        """Ask the link's hook about the visitor; the uid it answers (else the visitor's own)."""
        url = f"{link.hook_url.rstrip('/')}/shareAuth/{step}"
        try:
            answer = await self._post(url, body)
        except Exception as exc:  # refused by the egress guard, unreachable, not JSON: not admitted
            raise _refused("unAuthUser", 403, f"the auth hook could not be asked ({exc})") from None
        if not isinstance(answer, dict) or answer.get("success") is not True:
            said = answer.get("message") or answer.get("msg") if isinstance(answer, dict) else None
            raise _refused("unAuthUser", 403, str(said or "the auth hook refused the visitor"))
        data = answer.get("data")
        uid = data.get("uid") if isinstance(data, dict) else None
        if uid is None or uid == "":
            if step == "init":  # FastGPT: init must name the visitor
                raise _refused("unAuthUser", 403, "Invalid UID (the hook answered no data.uid)")
            return str(body["token"])
        if not isinstance(uid, str):
            raise _refused("unAuthUser", 403, "Invalid UID (data.uid must be a string)")
        try:
            return _check_uid(uid)
        except ShareLinkRefused:
            raise _refused("unAuthUser", 403, f"Invalid UID {uid[:40]!r}") from None

    async def _post(self, url: str, body: dict[str, Any]) -> Any:
        if self._http_client is None:
            raise RuntimeError("no HTTP client for auth hooks")
        async with self._http_client(timeout=HOOK_TIMEOUT_S, follow_redirects=False) as client:
            response = await client.post(url, json=body)
            return response.json()

    def report_finish(self, visit: ShareVisit, token: str, wait: Callable[[], Awaitable[Any]]) -> None:
        """After the visitor's chat, tell the hook (``/shareAuth/finish``: the token, the app's name and
        the node responses) in the background; ``wait`` gives the run's outcome once it ended."""
        if not visit.link.hook_url:
            return

        async def report() -> None:
            outcome = await wait()
            result = getattr(outcome, "result", None)
            responses = list(result.flow_responses) if result is not None else []
            app_name = outcome.prepared.graph.app.name
            url = f"{visit.link.hook_url.rstrip('/')}/shareAuth/finish"
            try:
                await self._post(url, {"token": token, "appName": app_name, "responseData": responses})
            except Exception as exc:  # its answer does not matter (FastGPT ignores it too)
                log.info("share link %s: the finish hook failed: %s", visit.link.share_id, exc)

        task = asyncio.get_running_loop().create_task(report())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
