"""``GET /api/health``: version, database status, whether migrations are current, and (when configured)
whether the Redis shared by replicas answers."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from fathom import __version__
from fathom.platform import Platform
from fathom.server.errors import envelope
from fathom.server.typed import Envelope, NoParams, answers, parsed

log = logging.getLogger("fathom.server")
router = APIRouter(tags=["health"])


class DatabaseStatus(BaseModel):
    dialect: str = Field(examples=["sqlite", "postgresql"])
    status: str = Field(examples=["ok", "error"])
    error: str | None = None


class Migrations(BaseModel):
    current: str | None
    head: str | None
    upToDate: bool


class RedisStatus(BaseModel):
    status: str = Field(
        examples=["ok", "unavailable"],
        description="Redis down fails no chat (status stays ok): stop and resume across replicas wait for it",
    )


class Health(BaseModel):
    version: str
    database: DatabaseStatus
    migrations: Migrations | None = None
    redis: RedisStatus | None = Field(default=None, description="Present when FATHOM_REDIS_URL is set")
    status: str = Field(examples=["ok", "degraded"])


_ANSWERS = answers(Health, description="Healthy: the database answers and its migrations are current")
_ANSWERS[503] = {"model": Envelope[Health], "description": "Degraded (the same body, status degraded)"}


@router.get("/api/health", summary="Liveness and readiness", responses=_ANSWERS)
async def health(request: Request, _: NoParams = parsed(NoParams)) -> JSONResponse:
    platform: Platform = request.app.state.platform
    db = await platform.database_health()
    data: dict[str, Any] = {"version": __version__, "database": {"dialect": db.dialect}}
    if db.ok:
        data["database"]["status"] = "ok"
        data["migrations"] = {"current": db.current, "head": db.head, "upToDate": db.up_to_date}
    else:
        data["database"]["status"] = "error"
        data["database"]["error"] = db.error
    healthy = db.up_to_date
    redis = await platform.chat.runs.redis_status()
    if redis is not None:
        data["redis"] = {"status": redis}
    data["status"] = "ok" if healthy else "degraded"
    return JSONResponse(envelope(data), status_code=200 if healthy else 503)
