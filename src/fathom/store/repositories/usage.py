"""Usage records and their per-day, per-app summary."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from fathom.store.db import Database
from fathom.store.models import TrainingBill, utcnow
from fathom.store.models import UsageRecord as UsageRow
from fathom.store.protocols import BillTotals, NotFound, TrainingBillRecord, UsageRecord, UsageSummaryRow


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
                    bill_id=usage.bill_id,
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

    async def create_bill(
        self,
        team_id: str,
        dataset_id: str,
        name: str,
        *,
        member_id: str | None = None,
        api_key_id: str | None = None,
    ) -> TrainingBillRecord:
        """A training bill (FastGPT's ``createTrainingUsage``): its id is the ``billId`` trainings name."""
        async with self.db.transaction() as session:
            row = TrainingBill(
                team_id=team_id, dataset_id=dataset_id, name=name, member_id=member_id, api_key_id=api_key_id
            )
            session.add(row)
            await session.flush()
            return _bill_record(row)

    async def get_bill(self, team_id: str, bill_id: str) -> TrainingBillRecord:
        """The team's bill (another team's, or none, is NotFound)."""
        async with self.db.sessions() as session:
            return _bill_record(await _bill(session, team_id, bill_id))

    async def bill_totals(self, team_id: str, *, days: int = 30) -> list[BillTotals]:
        """Per training bill, its usage records of the last ``days`` days summed (newest bill first);
        a bill without records yet is listed with zeros."""
        since = utcnow() - timedelta(days=days)
        query = (
            select(
                TrainingBill.id,
                TrainingBill.name,
                TrainingBill.dataset_id,
                func.coalesce(func.sum(UsageRow.input_tokens), 0),
                func.coalesce(func.sum(UsageRow.total_points), 0.0),
                func.count(UsageRow.id),
                func.coalesce(func.sum(UsageRow.output_tokens), 0),
            )
            .outerjoin(UsageRow, (UsageRow.bill_id == TrainingBill.id) & (UsageRow.created_at >= since))
            .where(TrainingBill.team_id == team_id, TrainingBill.created_at >= since)
            .group_by(TrainingBill.id, TrainingBill.name, TrainingBill.dataset_id, TrainingBill.created_at)
            .order_by(TrainingBill.created_at.desc(), TrainingBill.id.desc())
        )
        async with self.db.sessions() as session:
            rows = (await session.execute(query)).all()
        return [
            BillTotals(
                bill_id=str(r[0]),
                name=str(r[1]),
                dataset_id=str(r[2]),
                input_tokens=int(r[3] or 0),
                total_points=float(r[4] or 0.0),
                records=int(r[5]),
                output_tokens=int(r[6] or 0),
            )
            for r in rows
        ]


async def _bill(session: AsyncSession, team_id: str, bill_id: str) -> TrainingBill:
    row = await session.get(TrainingBill, bill_id)
    if row is None or row.team_id != team_id:
        raise NotFound(f"billId {bill_id} not found")
    return row


def _bill_record(row: TrainingBill) -> TrainingBillRecord:
    return TrainingBillRecord(
        id=row.id, team_id=row.team_id, dataset_id=row.dataset_id, name=row.name, created_at=row.created_at
    )
