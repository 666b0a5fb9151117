"""Share links of an app, in FastGPT's outLink shapes (``/api/support/outLink/{create,list,update,delete}``).

Only members who may manage the app (owners, admins, its creator, a ``manage`` grant) create, list,
change or delete its links; another team's link is not found. ``create`` answers the new ``shareId``;
``list`` the app's links, newest first; ``update`` changes the fields sent and keeps the others.
``allowedOrigins`` (Fathom's addition) lists the sites that may frame the link's share page
(:mod:`fathom.chat.embedding_sites`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from fathom.chat.embedding_sites import MAX_ORIGINS, BadOrigin, check_origins
from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.routes.app_access import chat_of, load_app
from fathom.server.routes.common import ANY_METHOD, iso, object_id
from fathom.server.typed import ApiModel, ObjectId, answers, parsed
from fathom.store.protocols import DEFAULT_SHARE_QPM, ShareLinkRecord, ShareLinkSettings

router = APIRouter(tags=["share links"])

LINK_TYPES = ("share",)  # FastGPT's other publish channels (feishu, wecom, …) are not served


class OutLinkLimit(ApiModel):
    """FastGPT's ``limit``: expiry, requests per minute per visitor, points, the auth hook."""

    expired_time: datetime | None = Field(None, alias="expiredTime")
    qpm: int = Field(DEFAULT_SHARE_QPM, alias="QPM", ge=0, le=1_000_000)
    max_usage_points: float = Field(-1, alias="maxUsagePoints", ge=-1)
    hook_url: str = Field("", alias="hookUrl", max_length=2000)


class OutLinkEdit(ApiModel):
    """The settings of a link, as ``create`` and ``update`` take them (absent: unchanged on update)."""

    name: str | None = Field(None, min_length=1, max_length=200)
    response_detail: bool | None = Field(None, alias="responseDetail")
    show_node_status: bool | None = Field(None, alias="showNodeStatus")
    show_raw_source: bool | None = Field(None, alias="showRawSource")
    limit: OutLinkLimit | None = None
    allowed_origins: list[str] | None = Field(None, alias="allowedOrigins", max_length=MAX_ORIGINS)


class OutLinkCreate(OutLinkEdit):
    app_id: ObjectId = Field(alias="appId")
    type: str = "share"
    name: str = Field(..., min_length=1, max_length=200)


class OutLinkUpdate(OutLinkEdit):
    id: str = Field(alias="_id")


class OutLinkList(ApiModel):
    app_id: ObjectId = Field(alias="appId")
    type: str | None = None


class OutLinkDelete(ApiModel):
    id: str


class OutLinkLimitView(BaseModel):
    expiredTime: str | None
    QPM: int
    maxUsagePoints: float
    hookUrl: str


class OutLinkView(BaseModel):
    """A share link as ``list`` answers it (FastGPT's outLink schema)."""

    id_: str = Field(alias="_id")
    shareId: str
    teamId: str
    tmbId: str
    appId: str
    type: str
    name: str
    responseDetail: bool
    showNodeStatus: bool
    showRawSource: bool
    usagePoints: float
    lastTime: str | None
    limit: OutLinkLimitView
    allowedOrigins: list[str]


def _link_view(link: ShareLinkRecord) -> dict[str, Any]:
    return {
        "_id": link.id,
        "shareId": link.share_id,
        "teamId": link.team_id,
        "tmbId": link.member_id,
        "appId": link.app_id,
        "type": link.type,
        "name": link.name,
        "responseDetail": link.response_detail,
        "showNodeStatus": link.show_node_status,
        "showRawSource": link.show_raw_source,
        "usagePoints": link.usage_points,
        "lastTime": iso(link.last_time),
        "limit": {
            "expiredTime": iso(link.expired_time),
            "QPM": link.qpm,
            "maxUsagePoints": link.max_usage_points,
            "hookUrl": link.hook_url,
        },
        "allowedOrigins": list(link.allowed_origins),
    }


def _settings(request: Request, edit: OutLinkEdit, base: ShareLinkSettings) -> ShareLinkSettings:
    """``base`` with what ``edit`` sends; a hook URL the egress guard would never fetch is a 400."""
    limit = edit.limit
    hook_url = limit.hook_url.strip() if limit is not None else base.hook_url
    if hook_url and limit is not None:
        chat_of(request).share_links.check_hook_url(hook_url)
    origins = base.allowed_origins
    if edit.allowed_origins is not None:
        try:
            origins = check_origins(edit.allowed_origins)
        except BadOrigin as exc:
            field = "allowedOrigins" if exc.place is None else f"allowedOrigins[{exc.place}]"
            raise ApiError(400, "invalidParams", f"{field}: {exc}") from None
    expired = limit.expired_time if limit is not None else base.expired_time
    if expired is not None and expired.tzinfo is None:
        expired = expired.replace(tzinfo=UTC)
    return ShareLinkSettings(
        name=edit.name if edit.name is not None else base.name,
        response_detail=base.response_detail if edit.response_detail is None else edit.response_detail,
        show_node_status=base.show_node_status if edit.show_node_status is None else edit.show_node_status,
        show_raw_source=base.show_raw_source if edit.show_raw_source is None else edit.show_raw_source,
        expired_time=expired,
        qpm=limit.qpm if limit is not None else base.qpm,
        max_usage_points=limit.max_usage_points if limit is not None else base.max_usage_points,
        hook_url=hook_url,
        allowed_origins=origins,
    )


def _current(link: ShareLinkRecord) -> ShareLinkSettings:
    return ShareLinkSettings(
        name=link.name,
        response_detail=link.response_detail,
        show_node_status=link.show_node_status,
        show_raw_source=link.show_raw_source,
        expired_time=link.expired_time,
        qpm=link.qpm,
        max_usage_points=link.max_usage_points,
        hook_url=link.hook_url,
        allowed_origins=link.allowed_origins,
    )


async def _managed_link(request: Request, auth: AuthContext, link_id: str, field: str) -> ShareLinkRecord:
    """The team's link with this id, if the caller may manage its app."""
    object_id({field: link_id}, field, "share link")
    link = await chat_of(request).share_links.get(auth.team_id, link_id)
    await load_app(request, auth, link.app_id, "manage")
    return link


@router.api_route(
    "/api/support/outLink/create",
    methods=ANY_METHOD,
    summary="Create a share link of an app (answers its shareId)",
    responses=answers(str),
)
async def create_link(
    request: Request, auth: AuthContext = Depends(authenticate), body: OutLinkCreate = parsed(OutLinkCreate)
) -> dict[str, Any]:
    app_id = body.app_id
    if body.type not in LINK_TYPES:
        raise ApiError(400, "invalidParams", f"type: only {', '.join(LINK_TYPES)} links are served")
    await load_app(request, auth, app_id, "manage")
    settings = _settings(request, body, ShareLinkSettings(name=body.name))
    link = await chat_of(request).share_links.create(
        auth.team_id, app_id, auth.member_id, body.type, settings
    )
    return envelope(link.share_id)


@router.api_route(
    "/api/support/outLink/list",
    methods=ANY_METHOD,
    summary="The share links of an app",
    responses=answers(list[OutLinkView]),
)
async def list_links(
    request: Request, auth: AuthContext = Depends(authenticate), body: OutLinkList = parsed(OutLinkList)
) -> dict[str, Any]:
    app_id = body.app_id
    await load_app(request, auth, app_id, "manage")
    links = await chat_of(request).share_links.list_links(auth.team_id, app_id, body.type or None)
    return envelope([_link_view(link) for link in links])


@router.api_route(
    "/api/support/outLink/update",
    methods=ANY_METHOD,
    summary="Change a share link",
    responses=answers(dict[str, Any]),
)
async def update_link(
    request: Request, auth: AuthContext = Depends(authenticate), body: OutLinkUpdate = parsed(OutLinkUpdate)
) -> dict[str, Any]:
    link = await _managed_link(request, auth, body.id, "_id")
    settings = _settings(request, body, _current(link))
    await chat_of(request).share_links.update(auth.team_id, link.id, settings)
    return envelope({})


@router.api_route(
    "/api/support/outLink/delete",
    methods=ANY_METHOD,
    summary="Delete a share link",
    responses=answers(dict[str, Any]),
)
async def delete_link(
    request: Request, auth: AuthContext = Depends(authenticate), body: OutLinkDelete = parsed(OutLinkDelete)
) -> dict[str, Any]:
    link = await _managed_link(request, auth, body.id, "id")
    await chat_of(request).share_links.delete(auth.team_id, link.id)
    return envelope({})
