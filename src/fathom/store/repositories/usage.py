"""Usage records and their per-day, per-app summary."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from fathom.store.db import Database
from fathom.store.models import UsageRecord as UsageRow
from fathom.store.models import utcnow
from fathom.store.protocols import UsageRecord, UsageSummaryRow


class SqlUsageRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, usage: UsageRecord) -> None:
        async with self.db.transaction() as session:
            session.add(
                UsageRow(
                    team_id=usage.team_id,
                    app_id=usage.app_id,
                    api_key_id=usage.api_key_id,
                    source=usage.source,
                    module_name=usage.module_name,
                    model=usage.model,
                    input_tokens=usage.input_tokens,
                    output_tokens=usage.output_tokens,
                    total_points=usage.total_points,
                    **({"created_at": usage.created_at} if usage.created_at else {}),
                )
            )

    async def summarize(
        self, team_id: str, *, app_id: str | None = None, days: int = 30
    ) -> list[UsageSummaryRow]:
        """Totals per UTC day and app over the last ``days`` days, newest day first."""
        if self.db.is_postgres:
            day = func.to_char(func.timezone("UTC", UsageRow.created_at), "YYYY-MM-DD")
        else:
            day = func.strftime("%Y-%m-%d", UsageRow.created_at)
        query = (
            select(
                day.label("day"),
                UsageRow.app_id,
                func.sum(UsageRow.input_tokens),
                func.sum(UsageRow.output_tokens),
                func.sum(UsageRow.total_points),
                func.count(),
            )
            .where(UsageRow.team_id == team_id, UsageRow.created_at >= utcnow() - timedelta(days=days))
            .group_by(day, UsageRow.app_id)
            .order_by(day.desc(), UsageRow.app_id)
        )
        if app_id is not None:
            query = query.where(UsageRow.app_id == app_id)
        async with self.db.sessions() as session:
            rows = (await session.execute(query)).all()
        return [
            UsageSummaryRow(
                day=str(r[0]),
                app_id=r[1],
                input_tokens=int(r[2] or 0),
                output_tokens=int(r[3] or 0),
                total_points=float(r[4] or 0.0),
                records=int(r[5]),
            )
            for r in rows
        ]
