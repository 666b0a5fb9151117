"""Usage totals per app and per UTC day (``TeamAdmin.usage_report``), for owners and admins."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from fathom.server.auth import AuthContext
from fathom.server.errors import envelope
from fathom.server.routes.common import platform_of
from fathom.server.routes.keys import key_admin
from fathom.server.typed import ApiModel, OptionalObjectId, answers, parsed
from fathom.store.protocols import UsageSummaryRow

router = APIRouter(tags=["usage"])

DAYS_MAX = 366


class UsageQuery(ApiModel):
    days: int = Field(30, ge=1, le=DAYS_MAX, description="UTC days back from today")
    appId: OptionalObjectId = Field(None, description="Only this app")


class Totals(BaseModel):
    inputTokens: int
    outputTokens: int
    totalPoints: float
    records: int


class UsageRow(Totals):
    day: str = Field(examples=["2026-05-01"])
    appId: str | None
    appName: str


class AppTotals(Totals):
    appId: str | None
    appName: str


class DayTotals(Totals):
    day: str


class BillTotals(BaseModel):
    """A training bill (``createTrainingUsage``) and the usage of the trainings that named it."""

    billId: str
    name: str
    datasetId: str
    inputTokens: int
    outputTokens: int
    totalPoints: float
    records: int


class UsageSummary(BaseModel):
    days: int
    rows: list[UsageRow]
    byApp: list[AppTotals]
    byDay: list[DayTotals]
    byBill: list[BillTotals] = Field(description="Training bills made in these days, newest first")
    total: Totals


def _totals(rows: list[UsageSummaryRow]) -> dict[str, Any]:
    return {
        "inputTokens": sum(r.input_tokens for r in rows),
        "outputTokens": sum(r.output_tokens for r in rows),
        "totalPoints": round(sum(r.total_points for r in rows), 6),
        "records": sum(r.records for r in rows),
    }


@router.get(
    "/api/support/usage/summary", summary="Usage per app and per day", responses=answers(UsageSummary)
)
async def usage_summary(
    request: Request, auth: AuthContext = Depends(key_admin), payload: UsageQuery = parsed(UsageQuery)
) -> dict[str, Any]:
    """``rows`` per (day, app), newest day first; ``byApp`` and ``byDay`` totals; ``byBill``: each
    training bill's totals (none when ``appId`` is given); ``total`` over all. Training (embedding an
    import or a push) is recorded without an app: its rows have ``appId`` null."""
    days, app_id = payload.days, payload.appId
    report = await platform_of(request).team_admin.usage_report(auth.team_id, app_id=app_id, days=days)
    rows, bills, names = report.rows, report.bills, report.app_names
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
            "byBill": [
                {
                    "billId": bill.bill_id,
                    "name": bill.name,
                    "datasetId": bill.dataset_id,
                    "inputTokens": bill.input_tokens,
                    "outputTokens": bill.output_tokens,
                    "totalPoints": round(bill.total_points, 6),
                    "records": bill.records,
                }
                for bill in bills
            ],
            "total": _totals(rows),
        }
    )
