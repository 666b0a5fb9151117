"""Apps and their versions. Publishing freezes a snapshot; API runs use the published one."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import Table, Text, bindparam, select, type_coerce

from fathom.store.bound_statements import BoundStatement
from fathom.store.db import Database
from fathom.store.models import App, AppVersion, utcnow
from fathom.store.protocols import AppRecord, AppVersionRecord, NotFound

APP_TYPES = ("simple", "advanced", "plugin", "tool", "folder", "toolSet", "httpToolSet")
_EDITABLE = {"name", "intro", "avatar", "draft", "type"}


_APPS = cast(Table, App.__table__)
# Every chat request reads its app; the draft comes as the stored text, decoded only if asked for (a chat
# runs the published version). A driver that decodes JSON itself (psycopg) hands over a dict: kept as is.
_GET_APP = BoundStatement(
    select(*(type_coerce(c, Text).label(c.name) if c.name == "draft" else c for c in _APPS.c)).where(
        _APPS.c.id == bindparam("app_id")
    ),
    ("app_id",),
)


def _app_record(row: Any) -> AppRecord:
    draft = row.draft
    return AppRecord(
        id=row.id,
        team_id=row.team_id,
        name=row.name,
        type=row.type,
        intro=row.intro,
        avatar=row.avatar,
        stored_draft=draft if isinstance(draft, str) else dict(draft or {}),
        published_version_id=row.published_version_id,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _version_record(row: AppVersion) -> AppVersionRecord:
    return AppVersionRecord(
        id=row.id,
        app_id=row.app_id,
        version_name=row.version_name,
        nodes=list(row.nodes or []),
        edges=list(row.edges or []),
        chat_config=dict(row.chat_config or {}),
        is_publish=row.is_publish,
        created_at=row.created_at,
    )


class SqlAppRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create_app(
        self,
        team_id: str,
        name: str,
        *,
        type: str = "simple",
        intro: str = "",
        draft: dict[str, Any] | None = None,
    ) -> AppRecord:
        if not name.strip():
            raise ValueError("name: must not be empty")
        if type not in APP_TYPES:
            raise ValueError(f"type: {type!r} is not one of {', '.join(APP_TYPES)}")
        async with self.db.transaction() as session:
            row = App(team_id=team_id, name=name.strip(), type=type, intro=intro, draft=draft or {})
            session.add(row)
            await session.flush()
            return _app_record(row)

    async def _owned(self, session: Any, team_id: str, app_id: str) -> App:
        row = await session.get(App, app_id)
        if row is None or row.team_id != team_id:
            raise NotFound(f"app {app_id} not found")
        return row

    async def get_app(self, team_id: str, app_id: str) -> AppRecord:
        """The team's app (one Core statement: every chat request reads it)."""
        return (await self.get_app_and_owner(team_id, app_id))[0]

    async def get_app_and_owner(self, team_id: str, app_id: str) -> tuple[AppRecord, str | None]:
        """The team's app and the member who created it (``apps.member_id``), in one statement."""
        row = await self.db.run_read(lambda conn: _GET_APP.first(conn, {"app_id": app_id}))
        if row is None or row.team_id != team_id:
            raise NotFound(f"app {app_id} not found")
        return _app_record(row), row.member_id

    async def list_apps(self, team_id: str) -> list[AppRecord]:
        async with self.db.sessions() as session:
            rows = await session.scalars(
                select(App).where(App.team_id == team_id).order_by(App.created_at, App.id)
            )
            return [_app_record(row) for row in rows]

    async def update_app(self, team_id: str, app_id: str, **changes: Any) -> AppRecord:
        unknown = set(changes) - _EDITABLE
        if unknown:
            raise ValueError(
                f"cannot change {', '.join(sorted(unknown))}; editable: {', '.join(sorted(_EDITABLE))}"
            )
        async with self.db.transaction() as session:
            row = await self._owned(session, team_id, app_id)
            for key, value in changes.items():
                setattr(row, key, value)
            row.updated_at = utcnow()
            await session.flush()
            return _app_record(row)

    async def delete_app(self, team_id: str, app_id: str) -> None:
        async with self.db.transaction() as session:
            await session.delete(await self._owned(session, team_id, app_id))

    async def publish(
        self,
        team_id: str,
        app_id: str,
        *,
        nodes: list[Any],
        edges: list[Any],
        chat_config: dict[str, Any],
        version_name: str = "",
    ) -> AppVersionRecord:
        async with self.db.transaction() as session:
            app = await self._owned(session, team_id, app_id)
            version = AppVersion(
                app_id=app_id,
                team_id=team_id,
                version_name=version_name,
                nodes=nodes,
                edges=edges,
                chat_config=chat_config,
                is_publish=True,
            )
            session.add(version)
            await session.flush()
            app.published_version_id = version.id
            app.updated_at = utcnow()
            return _version_record(version)

    async def list_versions(self, team_id: str, app_id: str) -> list[AppVersionRecord]:
        async with self.db.sessions() as session:
            await self._owned(session, team_id, app_id)
            rows = await session.scalars(
                select(AppVersion)
                .where(AppVersion.app_id == app_id)
                .order_by(AppVersion.created_at.desc(), AppVersion.id.desc())
            )
            return [_version_record(row) for row in rows]

    async def get_version(self, team_id: str, app_id: str, version_id: str) -> AppVersionRecord:
        async with self.db.sessions() as session:
            await self._owned(session, team_id, app_id)
            row = await session.get(AppVersion, version_id)
            if row is None or row.app_id != app_id:
                raise NotFound(f"version {version_id} of app {app_id} not found")
            return _version_record(row)
