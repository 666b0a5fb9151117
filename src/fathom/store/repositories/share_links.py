"""Share links (FastGPT's outLink) and the per-visitor request counts behind their QPM limit.

The QPM count lives in the database, so it holds for a visitor whose requests reach different replicas
(see :mod:`fathom.store.repositories.rate_hits`: no minute ever answers more than ``qpm`` of a visitor's
requests, however the requests race).
"""

from __future__ import annotations

from sqlalchemy import delete, select

from fathom.store.db import Database
from fathom.store.models import ShareLink, ShareLinkHit, new_id, utcnow
from fathom.store.protocols import NotFound, ShareLinkRecord, ShareLinkSettings
from fathom.store.repositories.rate_hits import admit_hit


def _share_link_record(row: ShareLink) -> ShareLinkRecord:
    return ShareLinkRecord(
        id=row.id,
        share_id=row.share_id,
        team_id=row.team_id,
        app_id=row.app_id,
        member_id=row.member_id,
        type=row.type,
        name=row.name,
        response_detail=row.response_detail,
        show_node_status=row.show_node_status,
        show_raw_source=row.show_raw_source,
        expired_time=row.expired_time,
        qpm=row.qpm,
        max_usage_points=row.max_usage_points,
        hook_url=row.hook_url,
        usage_points=row.usage_points,
        last_time=row.last_time,
        created_at=row.created_at,
        allowed_origins=tuple(row.allowed_origins or ()),
    )


def _columns(settings: ShareLinkSettings) -> dict[str, object]:
    return {
        "name": settings.name,
        "response_detail": settings.response_detail,
        "show_node_status": settings.show_node_status,
        "show_raw_source": settings.show_raw_source,
        "expired_time": settings.expired_time,
        "qpm": settings.qpm,
        "max_usage_points": settings.max_usage_points,
        "hook_url": settings.hook_url,
        "allowed_origins": list(settings.allowed_origins),
    }


class SqlShareLinkRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create_link(
        self,
        team_id: str,
        app_id: str,
        member_id: str,
        share_id: str,
        link_type: str,
        settings: ShareLinkSettings,
    ) -> ShareLinkRecord:
        async with self.db.transaction() as session:
            row = ShareLink(
                id=new_id(),
                share_id=share_id,
                team_id=team_id,
                app_id=app_id,
                member_id=member_id,
                type=link_type,
                usage_points=0.0,
                created_at=utcnow(),
                **_columns(settings),
            )
            session.add(row)
            await session.flush()
            return _share_link_record(row)

    async def list_links(self, team_id: str, app_id: str, link_type: str | None) -> list[ShareLinkRecord]:
        """The app's links, newest first (``link_type`` filters when given)."""
        query = select(ShareLink).where(ShareLink.team_id == team_id, ShareLink.app_id == app_id)
        if link_type:
            query = query.where(ShareLink.type == link_type)
        async with self.db.sessions() as session:
            rows = await session.scalars(query.order_by(ShareLink.created_at.desc(), ShareLink.id.desc()))
            return [_share_link_record(row) for row in rows]

    async def get_link(self, team_id: str, link_id: str) -> ShareLinkRecord:
        """The link of this team with this id (another team's is not found)."""
        async with self.db.sessions() as session:
            row = await session.get(ShareLink, link_id)
            if row is None or row.team_id != team_id:
                raise NotFound(f"share link {link_id} not found")
            return _share_link_record(row)

    async def find_by_share_id(self, share_id: str) -> ShareLinkRecord | None:
        async with self.db.sessions() as session:
            row = await session.scalar(select(ShareLink).where(ShareLink.share_id == share_id))
            return _share_link_record(row) if row is not None else None

    async def update_link(self, team_id: str, link_id: str, settings: ShareLinkSettings) -> ShareLinkRecord:
        async with self.db.transaction() as session:
            row = await session.get(ShareLink, link_id)
            if row is None or row.team_id != team_id:
                raise NotFound(f"share link {link_id} not found")
            for name, value in _columns(settings).items():
                setattr(row, name, value)
            await session.flush()
            return _share_link_record(row)

    async def delete_link(self, team_id: str, link_id: str) -> None:
        async with self.db.transaction() as session:
            result = await session.execute(
                delete(ShareLink).where(ShareLink.id == link_id, ShareLink.team_id == team_id)
            )
            if result.rowcount == 0:  # type: ignore[attr-defined]
                raise NotFound(f"share link {link_id} not found")

    async def count_hit(self, link_id: str, out_link_uid: str, qpm: int) -> bool:
        """Count one request of the visitor; False (and not counted) when it would be more than ``qpm``
        in the last minute."""
        mine = (ShareLinkHit.link_id == link_id, ShareLinkHit.out_link_uid == out_link_uid)
        columns = {"link_id": link_id, "out_link_uid": out_link_uid}
        return await admit_hit(self.db, ShareLinkHit, mine, columns, qpm)
