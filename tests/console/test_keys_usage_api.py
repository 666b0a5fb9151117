"""The key and usage API behind the console's "Keys & usage" page, and the console's static serving."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from fathom.platform import Platform
from fathom.server.routes.console import STATIC_DIR
from fathom.store.protocols import UsageRecord

T = TypeVar("T")


def _data(response: Any) -> Any:
    body = response.json()
    assert body["code"] == 200, body
    return body["data"]


def test_created_key_is_shown_once_and_then_authenticates(live_server: Any) -> None:
    admin = live_server.client(live_server.admin_key)
    created = admin.post("/api/support/openapi/create", json={"name": "ci"})
    plain = _data(created)
    assert plain.startswith("fathom-") and created.json()["key"]["name"] == "ci"
    listed = _data(admin.get("/api/support/openapi/list"))
    assert {k["name"] for k in listed} == {"admin", "ci"}
    assert all(plain not in str(k) for k in listed)
    whoami = _data(live_server.client(plain).get("/api/v1/whoami"))
    assert whoami["teamId"] == live_server.boot.team_id
    assert whoami["keyId"] == created.json()["key"]["_id"]  # the console hides Revoke on this key


def test_a_key_needs_a_name(live_server: Any) -> None:
    admin = live_server.client(live_server.admin_key)
    for body in ({}, {"name": "   "}):
        response = admin.post("/api/support/openapi/create", json=body)
        assert response.status_code == 400, response.text
        assert response.json()["message"].startswith("name: is required")
    assert {k["name"] for k in _data(admin.get("/api/support/openapi/list"))} == {"admin"}


def test_revoked_key_is_refused_and_leaves_the_list(live_server: Any) -> None:
    admin = live_server.client(live_server.admin_key)
    plain = _data(admin.post("/api/support/openapi/create", json={"name": "temp"}))
    key_id = next(k["_id"] for k in _data(admin.get("/api/support/openapi/list")) if k["name"] == "temp")
    assert _data(admin.delete("/api/support/openapi/delete", params={"id": key_id})) is None
    assert live_server.client(plain).get("/api/v1/whoami").status_code == 401
    assert "temp" not in {k["name"] for k in _data(admin.get("/api/support/openapi/list"))}
    again = admin.delete("/api/support/openapi/delete", params={"id": key_id})
    assert again.status_code == 404


def test_a_key_cannot_revoke_itself(live_server: Any) -> None:
    admin = live_server.client(live_server.admin_key)
    own = next(k["_id"] for k in _data(admin.get("/api/support/openapi/list")) if k["name"] == "admin")
    response = admin.delete("/api/support/openapi/delete", params={"id": own})
    assert response.status_code == 400 and "itself" in response.json()["message"]


def test_members_and_app_scoped_keys_may_not_manage_keys_or_read_usage(live_server: Any) -> None:
    async def setup(platform: Platform) -> tuple[str, str]:
        member = await platform.teams.add_member(live_server.boot.team_id, "bob", "member")
        _, member_key = await platform.api_keys.create_key(live_server.boot.team_id, member.id)
        app = await platform.apps.create_app(live_server.boot.team_id, "scoped")
        _, app_key = await platform.api_keys.create_key(
            live_server.boot.team_id, live_server.boot.member_id, app_id=app.id
        )
        return member_key, app_key

    member_key, app_key = _run(live_server, setup)
    for key in (member_key, app_key):
        client = live_server.client(key)
        for method, path in [
            ("POST", "/api/support/openapi/create"),
            ("GET", "/api/support/openapi/list"),
            ("GET", "/api/support/usage/summary"),
        ]:
            response = client.request(method, path)
            assert response.status_code == 403, (key, path, response.text)


def test_usage_summary_totals_per_app_and_per_day(live_server: Any) -> None:
    team = live_server.boot.team_id

    async def setup(platform: Platform) -> str:
        app = await platform.apps.create_app(team, "Helpdesk")
        for tokens in (10, 20):
            await platform.usage.record(
                UsageRecord(team, app.id, "api", "chat", "m", tokens, 5, total_points=0.5)
            )
        await platform.usage.record(UsageRecord(team, None, "api", "embed", "e", 7, 0, total_points=0.1))
        return app.id

    app_id = _run(live_server, setup)
    admin = live_server.client(live_server.admin_key)
    summary = _data(admin.get("/api/support/usage/summary", params={"days": 7}))
    by_app = {row["appId"]: row for row in summary["byApp"]}
    assert by_app[app_id]["inputTokens"] == 30 and by_app[app_id]["appName"] == "Helpdesk"
    assert by_app[app_id]["records"] == 2 and by_app[None]["inputTokens"] == 7
    assert summary["total"]["inputTokens"] == 37 and len(summary["byDay"]) == 1
    only = _data(admin.get("/api/support/usage/summary", params={"appId": app_id}))
    assert only["total"]["records"] == 2
    assert admin.get("/api/support/usage/summary", params={"days": 0}).status_code == 400


def test_console_serves_index_for_client_routes_but_not_for_api_paths(live_server: Any) -> None:
    client = live_server.client()
    page = client.get("/knowledge/abc")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "Fathom" in page.text
    assert client.get("/api/no-such-route").status_code == 404
    assert client.get("/openapi.json").json()["info"]["title"] == "Fathom"
    assert client.get("/docs").status_code == 200
    assert client.get("/assets/missing.js").status_code == 404
    assert client.get("/../pyproject.toml").status_code in (200, 404)
    assert "[project]" not in client.get("/%2e%2e/%2e%2e/platform.py").text


def test_built_console_assets_are_served_gzipped_with_long_cache(live_server: Any) -> None:
    index = STATIC_DIR / "index.html"
    assert index.is_file(), "the built console must be committed under src/fathom/server/static"
    client = live_server.client()
    html = client.get("/").text
    asset = next(part.split('"')[0] for part in html.split('src="')[1:] if "/assets/" in part)
    response = client.get(asset, headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert "immutable" in response.headers["cache-control"]
    assert "javascript" in response.headers["content-type"]


def _run(live_server: Any, setup: Callable[[Platform], Awaitable[T]]) -> T:
    """Run ``setup`` against a second platform on the live server's database (its own event loop)."""

    async def main() -> T:
        platform = Platform.build(live_server.platform.settings)
        try:
            return await setup(platform)
        finally:
            await platform.db.close()

    return asyncio.run(main())


def test_committed_console_build_matches_the_web_sources() -> None:
    """``npm run build`` records a hash of ``web/`` sources; a source edit without a rebuild fails here."""
    import hashlib
    import json

    web = Path(__file__).parents[2] / "web"
    info = json.loads((STATIC_DIR / "build-info.json").read_text())
    files = sorted(
        [p.relative_to(web).as_posix() for p in (web / "src").rglob("*") if p.is_file()]
        + ["index.html", "package-lock.json", "vite.config.ts"]
    )
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0" + (web / name).read_bytes() + b"\0")
    assert info["files"] == len(files)
    assert info["sourceHash"] == digest.hexdigest(), "web/ changed: run `cd web && npm run build` and commit"
