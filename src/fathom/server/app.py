"""The FastAPI application factory."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from pydantic import BaseModel
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from fathom import __version__
from fathom.platform import Platform
from fathom.server import health
from fathom.server.auth import AuthContext, authenticate_identity
from fathom.server.body_limit import BodySizeLimitMiddleware
from fathom.server.errors import envelope, install_error_handlers
from fathom.server.openapi import install_unique_operation_ids, route_id
from fathom.server.routes import (
    accounts,
    api_collections,
    api_docs,
    apps,
    chat,
    chat_files,
    chat_logs,
    chunk_preview,
    collection_edit,
    collections,
    console,
    data,
    dataset_tags,
    dataset_update,
    datasets,
    embed,
    history,
    keys,
    models,
    question_guide,
    share_chat,
    share_links,
    team_access,
    tool_sets,
    training,
    training_usage,
    usage,
)
from fathom.server.typed import NoParams, answers, parsed

identity = APIRouter(tags=["accounts"])


class WhoAmI(BaseModel):
    teamId: str
    tmbId: str
    role: str
    appId: str | None
    keyId: str | None
    username: str | None


@identity.get(
    "/api/v1/whoami", summary="The identity behind the API key or session", responses=answers(WhoAmI)
)
async def whoami(
    auth: AuthContext = Depends(authenticate_identity), _: NoParams = parsed(NoParams)
) -> dict[str, object]:
    return envelope(
        {
            "teamId": auth.team_id,
            "tmbId": auth.member_id,
            "role": auth.role,
            "appId": auth.app_id,
            "keyId": auth.api_key_id,
            "username": auth.username,
        }
    )


def create_app(platform: Platform, *, run_workers: bool = True) -> FastAPI:
    """Build the HTTP app around a prepared platform (database migrated, root team present)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if run_workers:
            platform.start_workers()
        try:
            yield
        finally:
            await platform.stop_workers()
            try:
                await platform.team_admin.flush_key_usage()  # write the usage counters still held behind
            except Exception as exc:  # a database down at shutdown: the server still stops cleanly
                logging.getLogger("fathom.server").warning(
                    "API key usage counters of the last second were not written (%s)", type(exc).__name__
                )

    app = FastAPI(
        title="Fathom",
        version=__version__,
        description="Knowledge-base Q&A, workflows and agents; speaks FastGPT's HTTP API.",
        lifespan=lifespan,
        docs_url=None,  # /docs and /redoc come from routes/api_docs.py, with no CDN
        redoc_url=None,
        openapi_url="/openapi.json",
        generate_unique_id_function=route_id,
    )
    install_unique_operation_ids(app)
    app.state.platform = platform
    install_error_handlers(app)
    app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_methods=["*"], allow_headers=["*"])
    app.add_middleware(BodySizeLimitMiddleware, max_bytes=platform.settings.max_body_bytes)
    if platform.settings.trusted_proxies:
        # the client address and scheme from X-Forwarded-For / -Proto, only when the connection comes
        # from a listed proxy (the server itself believes no one: see server_config)
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=platform.settings.trusted_proxies)
    app.include_router(health.router)
    # the chat routes first: routes are matched in order, and chat requests are the hot path
    for module in (
        chat,
        datasets,
        dataset_update,
        collections,
        api_collections,
        collection_edit,
        dataset_tags,
        chunk_preview,
        data,
        keys,
        accounts,
        team_access,
        share_links,
        share_chat,
        usage,
        training,
        training_usage,
        models,
        embed,
        api_docs,
        console,
        apps,
        tool_sets,
        history,
        question_guide,
        chat_logs,
        chat_files,
    ):
        app.include_router(module.router)
    app.include_router(identity)
    return app


def server_config(app: FastAPI, host: str, port: int, **options: Any) -> uvicorn.Config:
    """uvicorn's settings for serving ``app``: forwarded headers are never read by uvicorn itself (it
    would believe any loopback client's X-Forwarded-For); the app reads them from
    ``FATHOM_TRUSTED_PROXIES`` only."""
    options.setdefault("log_config", None)
    return uvicorn.Config(app, host=host, port=port, proxy_headers=False, **options)
