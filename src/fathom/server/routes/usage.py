"""Usage totals per app and per UTC day (``platform.usage.summarize``), for owners and admins."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from fathom.server.auth import AuthContext, authenticate
from fathom.server.errors import ApiError, envelope
from fathom.server.routes.common import object_id, params, platform_of
from fathom.server.routes.keys import require_key_admin
from fathom.store.protocols import UsageSummaryRow

router = APIRouter(tags=["usage"])

DAYS_MAX = 366


def _totals(rows: list[UsageSummaryRow]) -> dict[str, Any]:
    return {
        "inputTokens": sum(r.input_tokens for r in rows),
        "outputTokens": sum(r.output_tokens for r in rows),
        "totalPoints": round(sum(r.total_points for r in rows), 6),
        "records": sum(r.records for r in rows),
    }


def _days(values: dict[str, Any]) -> int:
    raw = values.get("days", 30)
    try:
        days = int(raw)
    except (TypeError, ValueError):
        raise ApiError(400, "invalidParams", f"days: must be a whole number, got {raw!r}") from None
    if not 1 <= days <= DAYS_MAX:
        raise ApiError(400, "invalidParams", f"days: must be between 1 and {DAYS_MAX}")
    return days


@router.get("/api/support/usage/summary", summary="Usage per app and per day")
async def usage_summary(request: Request, auth: AuthContext = Depends(authenticate)) -> dict[str, Any]:
    """``rows`` per (day, app), newest day first; ``byApp`` and ``byDay`` totals; ``total`` over all."""
    require_key_admin(auth)
    values = await params(request)
    days = _days(values)
    app_id = object_id(values, "appId") if values.get("appId") else None
    rows = await platform_of(request).usage.summarize(auth.team_id, app_id=app_id, days=days)
    names = {app.id: app.name for app in await platform_of(request).apps.list_apps(auth.team_id)}
    by_app: dict[str, list[UsageSummaryRow]] = {}
    by_day: dict[str, list[UsageSummaryRow]] = {}
    for row in rows:
        by_app.setdefault(row.app_id or "", []).append(row)
        by_day.setdefault(row.day, []).append(row)
    return envelope(
        {
            "days": days,
            "rows": [
                {
                    "day": r.day,
                    "appId": r.app_id,
                    "appName": names.get(r.app_id or "", ""),
                    "inputTokens": r.input_tokens,
                    "outputTokens": r.output_tokens,
                    "totalPoints": r.total_points,
                    "records": r.records,
                }
                for r in rows
            ],
            "byApp": [
                {"appId": key or None, "appName": names.get(key, ""), **_totals(group)}
                for key, group in sorted(by_app.items())
            ],
            "byDay": [{"day": day, **_totals(group)} for day, group in sorted(by_day.items())],
            "total": _totals(rows),
        }
    )
