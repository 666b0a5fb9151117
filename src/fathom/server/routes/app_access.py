"""Loading an app for a caller: team scope, app-scoped keys, and the permission the route needs."""

from __future__ import annotations

from fastapi import Request

from fathom.chat import ChatApplication, ChatError
from fathom.server.auth import AuthContext
from fathom.server.errors import ApiError
from fathom.server.permissions import Need, forbidden, require_permission
from fathom.server.routes.common import platform_of
from fathom.store.protocols import AppRecord


def chat_of(request: Request) -> ChatApplication:
    return platform_of(request).chat


def api_error(exc: ChatError) -> ApiError:
    """The envelope error for a chat service refusal. FastGPT sends a bad request (no app key,
    ``messages is empty``, ...) as its generic error, body code 500; the body keeps that code, the
    HTTP status is 400 (the request is at fault, not the server)."""
    error = ApiError(exc.http_status, exc.status_text, exc.message)
    if exc.http_status == 500 and not exc.status_text:
        error.http_status = 400
    return error


async def load_app(request: Request, auth: AuthContext, app_id: str, need: Need) -> AppRecord:
    """The app if the caller may ``need`` it; another team's app is not found, another app of an
    app-scoped key is forbidden."""
    if auth.key_app_bound and app_id != auth.app_id:
        raise forbidden(f"use app {app_id} (it is limited to app {auth.app_id})")
    chat = chat_of(request)
    app = await chat.apps.apps.get_app(auth.team_id, app_id)
    owner = await chat.owners.owner_of(app_id)
    if auth.key_app_bound and need == "read":
        return app  # a key made for this app may chat with it and read its history
    await require_permission(platform_of(request), auth, "app", app_id, owner, need)
    return app
