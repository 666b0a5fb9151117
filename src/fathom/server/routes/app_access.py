"""Loading an app for a caller: team scope, app-scoped keys, and the permission the route needs."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from fastapi import Request

from fathom.chat import ChatApplication
from fathom.chat.ownership import ChatCaller
from fathom.chat.share_links import ShareVisit
from fathom.server.auth import AuthContext
from fathom.server.permissions import Need, forbidden, has_permission, require_permission
from fathom.server.routes.common import platform_of
from fathom.store.protocols import AppRecord


def chat_of(request: Request) -> ChatApplication:
    return platform_of(request).chat


async def load_app(
    request: Request, auth: AuthContext, app_id: str, need: Need, *, chatting: bool = False
) -> AppRecord:
    """The app if the caller may ``need`` it; another team's app is not found. A key limited to one app
    may use it only for ``chatting`` routes (chat, stop, resume, its chats and records): every other
    route of that app, and every route of another app, is forbidden to it."""
    return (await load_app_and_owner(request, auth, app_id, need, chatting=chatting))[0]


async def load_app_and_owner(
    request: Request, auth: AuthContext, app_id: str, need: Need, *, chatting: bool = False
) -> tuple[AppRecord, str | None]:
    """:func:`load_app`, and the member who created the app (read in the same statement)."""
    if auth.key_app_bound:
        if app_id != auth.app_id:
            raise forbidden(f"use app {app_id} (it is limited to app {auth.app_id})")
        if not chatting:
            raise forbidden(
                f"{need} app {app_id}: it may only chat with app {auth.app_id} and read its chats"
            )
    chat = chat_of(request)
    app, owner = await chat.apps.get_with_owner(auth.team_id, app_id)  # one statement
    if auth.key_app_bound:
        return app, owner  # a key made for this app may chat with it and read its history
    await require_permission(platform_of(request), auth, "app", app_id, owner, need)
    return app, owner


async def chat_caller(request: Request, auth: AuthContext, app_id: str, app_owner: str | None) -> ChatCaller:
    """The caller as the chat ownership rule sees them: the session's member or the key (a key owns its
    chats, never its creator), and whether they manage the app (FastGPT's chat-log permission; never a
    key limited to one app)."""
    manages = not auth.key_app_bound and await has_permission(
        platform_of(request), auth, "app", app_id, app_owner, "manage"
    )
    return ChatCaller.of_member_or_key(auth.member_id, auth.api_key_id, manages_app=manages)


def visitor_caller(visit: ShareVisit) -> ChatCaller:
    """A share-link visitor as the ownership rule sees them; an expired link's visitor owns nothing."""
    expires = visit.link.expired_time
    live = expires is None or expires > datetime.now(UTC)
    return ChatCaller.of_visitor(visit.link.share_id, visit.uid, link_live=live)


_OBJECT_ID = re.compile(r"^[0-9a-f]{24}$")
# keys under which a graph, simple config or form names another resource of the team
_REFERENCE_KEYS = {"datasetId": "dataset", "pluginId": "app", "toolSetId": "app", "appId": "app"}


def _referenced_resources(graph: Any) -> set[tuple[str, str]]:
    """The knowledge bases (``datasetId``) and apps (``pluginId`` of app/plugin/tool nodes, ``toolSetId``
    and ``appId`` of simple-app tools) a submitted graph, simple config or form names, anywhere in it."""
    found: set[tuple[str, str]] = set()
    stack = [graph]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if key in _REFERENCE_KEYS and isinstance(item, str) and _OBJECT_ID.match(item):
                    found.add((_REFERENCE_KEYS[key], item))
                else:
                    stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
    return found


async def require_readable_references(request: Request, auth: AuthContext, graph: Any) -> None:
    """An editor may save (or publish) a graph only over knowledge bases and apps they may read
    themselves: the app later runs with its owner's permissions, which may be wider."""
    platform = platform_of(request)
    for resource_type, resource_id in sorted(_referenced_resources(graph)):
        if resource_type == "dataset":
            owner = await platform.team_admin.dataset_owner(resource_id)
        else:
            owner = await chat_of(request).owner_of(resource_id)
        await require_permission(platform, auth, resource_type, resource_id, owner, "read")
