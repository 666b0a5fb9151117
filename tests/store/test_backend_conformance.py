"""The repository conformance suite: every test runs on SQLite and on PostgreSQL (``backend`` fixture)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from fathom.store.db import Database
from fathom.store.models import utcnow
from fathom.store.protocols import ChatItemRecord, Conflict, NotFound, UsageRecord
from fathom.store.repositories import (
    SqlApiKeyRepository,
    SqlAppRepository,
    SqlChatRepository,
    SqlJobQueue,
    SqlTeamRepository,
    SqlUsageRepository,
)


async def _team_and_owner(db: Database) -> tuple[str, str]:
    teams = SqlTeamRepository(db)
    team = await teams.create_team("Acme")
    owner = await teams.add_member(team.id, "alice", "owner")
    return team.id, owner.id


async def test_team_members_have_roles_and_unique_names(database: Database) -> None:
    teams = SqlTeamRepository(database)
    team = await teams.create_team("  Acme  ")
    assert team.name == "Acme" and len(team.id) == 24
    await teams.add_member(team.id, "alice", "owner")
    bob = await teams.add_member(team.id, "bob")
    assert bob.role == "member"
    assert [m.name for m in await teams.list_members(team.id)] == ["alice", "bob"]
    with pytest.raises(Conflict, match="bob"):
        await teams.add_member(team.id, "bob")
    with pytest.raises(ValueError, match="role"):
        await teams.add_member(team.id, "carol", "superuser")  # type: ignore[arg-type]
    assert await teams.count_teams() == 1


async def test_the_first_team_and_its_first_owner_are_the_oldest_ones(database: Database) -> None:
    teams = SqlTeamRepository(database)
    assert await teams.first_team() is None
    root = await teams.create_team("Root")
    await teams.add_member(root.id, "bob")
    assert await teams.first_owner(root.id) is None
    alice = await teams.add_member(root.id, "alice", "owner")
    other = await teams.create_team("Other")
    await teams.add_member(other.id, "carol", "owner")
    await teams.add_member(root.id, "dave", "owner")
    first = await teams.first_team()
    assert first is not None and first.id == root.id
    owner = await teams.first_owner(root.id)
    assert owner is not None and owner.id == alice.id
    await database.analyze()  # the planner's statistics, refreshed on both backends


async def test_a_members_role_is_read_as_it_is_now_and_none_for_no_member(database: Database) -> None:
    teams = SqlTeamRepository(database)
    team_id, owner_id = await _team_and_owner(database)
    bob = await teams.add_member(team_id, "bob")
    assert await teams.member_role(owner_id) == "owner" and await teams.member_role(bob.id) == "member"
    await teams.set_role(team_id, bob.id, "admin")
    assert await teams.member_role(bob.id) == "admin"
    await teams.remove_member(team_id, bob.id)
    assert await teams.member_role(bob.id) is None


async def test_resource_permission_set_replace_and_clear(database: Database) -> None:
    teams = SqlTeamRepository(database)
    team_id, owner_id = await _team_and_owner(database)
    assert await teams.get_permission(owner_id, "app", "a" * 24) is None
    await teams.set_permission(owner_id, "app", "a" * 24, "read")
    await teams.set_permission(owner_id, "app", "a" * 24, "manage")
    assert await teams.get_permission(owner_id, "app", "a" * 24) == "manage"
    await teams.set_permission(owner_id, "app", "a" * 24, None)
    assert await teams.get_permission(owner_id, "app", "a" * 24) is None
    with pytest.raises(NotFound):
        await teams.set_permission("f" * 24, "app", "a" * 24, "read")


async def test_api_key_is_stored_as_hash_and_found_by_plain_value(database: Database) -> None:
    keys = SqlApiKeyRepository(database)
    team_id, owner_id = await _team_and_owner(database)
    record, plain = await keys.create_key(team_id, owner_id, name="ci", app_id="b" * 24)
    assert plain.startswith("fathom-") and plain.count("-") == 1
    assert record.prefix == plain[:12] and record.app_id == "b" * 24
    found = await keys.find_by_plain_key(f"  {plain} ")
    assert found is not None and found.id == record.id
    assert await keys.find_by_plain_key(plain + "x") is None
    from sqlalchemy import text

    async with database.engine.connect() as conn:
        stored = (await conn.execute(text("SELECT key_hash FROM api_keys"))).scalars().all()
    assert plain not in " ".join(stored)


async def test_revoked_api_key_no_longer_authenticates(database: Database) -> None:
    keys = SqlApiKeyRepository(database)
    team_id, owner_id = await _team_and_owner(database)
    record, plain = await keys.create_key(team_id, owner_id)
    await keys.record_use(record.id, points=1.5)
    assert (await keys.list_keys(team_id))[0].usage_points == pytest.approx(1.5)
    await keys.revoke_key(team_id, record.id)
    assert await keys.find_by_plain_key(plain) is None
    assert await keys.list_keys(team_id) == []
    with pytest.raises(NotFound):
        await keys.revoke_key(team_id, record.id)


async def test_api_key_for_member_of_another_team_is_refused(database: Database) -> None:
    keys = SqlApiKeyRepository(database)
    _, owner_id = await _team_and_owner(database)
    other = await SqlTeamRepository(database).create_team("Other")
    with pytest.raises(NotFound):
        await keys.create_key(other.id, owner_id)


async def test_job_lifecycle_claim_complete(database: Database) -> None:
    jobs = SqlJobQueue(database)
    job = await jobs.enqueue("demo", {"n": 1}, team_id=None)
    assert job.status == "queued" and job.attempts == 0
    claimed = await jobs.claim("w1", lease_seconds=30)
    assert claimed is not None and claimed.id == job.id
    assert claimed.status == "running" and claimed.attempts == 1 and claimed.lease_owner == "w1"
    assert await jobs.claim("w2", lease_seconds=30) is None
    assert await jobs.heartbeat(job.id, "w1", lease_seconds=30)
    assert not await jobs.heartbeat(job.id, "w2", lease_seconds=30)
    assert not await jobs.complete(job.id, "w2", {"x": 1})
    assert await jobs.complete(job.id, "w1", {"x": 1})
    done = await jobs.get(job.id)
    assert done.status == "done" and done.result == {"x": 1} and done.lease_owner is None


async def test_failed_job_is_retried_until_attempts_run_out_and_keeps_its_error(database: Database) -> None:
    jobs = SqlJobQueue(database)
    job = await jobs.enqueue("demo", {}, max_attempts=2)
    first = await jobs.claim("w", lease_seconds=30)
    assert first is not None
    await jobs.fail(job.id, "w", "boom 1")
    again = await jobs.get(job.id)
    assert again.status == "queued" and again.last_error == "boom 1"
    second = await jobs.claim("w", lease_seconds=30)
    assert second is not None and second.attempts == 2
    await jobs.fail(job.id, "w", "boom 2")
    final = await jobs.get(job.id)
    assert final.status == "failed" and final.last_error == "boom 2"
    assert await jobs.claim("w", lease_seconds=30) is None
    retried = await jobs.retry(job.id)
    assert retried.status == "queued" and retried.attempts == 0 and retried.last_error == "boom 2"
    with pytest.raises(ValueError, match="only failed jobs"):
        await jobs.retry(job.id)


async def test_retry_delay_defers_the_next_claim(database: Database) -> None:
    jobs = SqlJobQueue(database)
    job = await jobs.enqueue("demo", {})
    await jobs.claim("w", lease_seconds=30)
    await jobs.fail(job.id, "w", "later", retry_delay_seconds=3600)
    assert await jobs.claim("w", lease_seconds=30) is None


async def test_expired_lease_is_claimed_again_by_another_worker(database: Database) -> None:
    jobs = SqlJobQueue(database)
    job = await jobs.enqueue("demo", {}, max_attempts=2)
    dead = await jobs.claim("dead-worker", lease_seconds=0.05)
    assert dead is not None
    await asyncio.sleep(0.1)
    taken = await jobs.claim("w2", lease_seconds=30)
    assert taken is not None and taken.id == job.id and taken.lease_owner == "w2"
    assert taken.attempts == 1 and taken.lease_expiries == 1  # the dead worker cost the job no attempt
    assert not await jobs.complete(job.id, "dead-worker")  # the old owner cannot finish it any more
    assert await jobs.complete(job.id, "w2")


async def test_job_whose_lease_expires_too_often_fails_with_a_reason(database: Database) -> None:
    jobs = SqlJobQueue(database, max_lease_expiries=2)
    job = await jobs.enqueue("demo", {}, max_attempts=1)
    for worker in ("dead-1", "dead-2", "dead-3"):  # one claim and two lapsed leases are still one attempt
        claimed = await jobs.claim(worker, lease_seconds=0.05)
        assert claimed is not None and claimed.attempts == 1
        await asyncio.sleep(0.1)
    assert await jobs.claim("w2", lease_seconds=30) is None  # the third lapse is one too many
    failed = await jobs.get(job.id)
    assert failed.status == "failed" and "lease expired 3 times" in (failed.last_error or "")
    retried = await jobs.retry(job.id)
    assert retried.attempts == 0 and retried.lease_expiries == 0


async def test_a_permanent_failure_is_not_retried(database: Database) -> None:
    jobs = SqlJobQueue(database)
    job = await jobs.enqueue("demo", {}, max_attempts=3)
    await jobs.claim("w", lease_seconds=30)
    assert await jobs.fail(job.id, "w", "404 Not Found", permanent=True)
    failed = await jobs.get(job.id)
    assert failed.status == "failed" and failed.attempts == 1 and failed.last_error == "404 Not Found"
    assert await jobs.claim("w", lease_seconds=30) is None


async def test_claim_prefers_the_team_with_fewer_running_jobs(database: Database) -> None:
    teams = SqlTeamRepository(database)
    big, small = await teams.create_team("Big"), await teams.create_team("Small")
    jobs = SqlJobQueue(database)
    for i in range(5):
        await jobs.enqueue("ingest", {"i": i}, team_id=big.id)
    await jobs.enqueue("ingest", {"i": "s"}, team_id=small.id)
    first = await jobs.claim("w1", lease_seconds=30)
    second = await jobs.claim("w2", lease_seconds=30)
    assert first is not None and second is not None
    assert first.team_id == big.id  # oldest first while nobody runs anything
    assert second.team_id == small.id  # then the team with no running job, ahead of big's backlog


async def test_claim_filters_by_kind(database: Database) -> None:
    jobs = SqlJobQueue(database)
    await jobs.enqueue("a", {})
    b = await jobs.enqueue("b", {})
    claimed = await jobs.claim("w", lease_seconds=30, kinds=["b"])
    assert claimed is not None and claimed.id == b.id


async def test_concurrent_claims_from_separate_connections_never_share_a_job(database: Database) -> None:
    jobs_count = 12
    queue = SqlJobQueue(database)
    for i in range(jobs_count):
        await queue.enqueue("work", {"i": i})
    others = [Database(database.url) for _ in range(3)]
    try:
        queues = [SqlJobQueue(db) for db in others]

        async def drain(q: SqlJobQueue, name: str) -> list[str]:
            got = []
            while (job := await q.claim(name, lease_seconds=30)) is not None:
                got.append(job.id)
            return got

        results = await asyncio.gather(*(drain(q, f"w{i}") for i, q in enumerate(queues)))
    finally:
        for db in others:
            await db.close()
    claimed = [job_id for batch in results for job_id in batch]
    assert len(claimed) == jobs_count and len(set(claimed)) == jobs_count


async def test_apps_publish_freezes_versions_newest_first(database: Database) -> None:
    apps = SqlAppRepository(database)
    team_id, _ = await _team_and_owner(database)
    app = await apps.create_app(team_id, "Helper", type="advanced", draft={"nodes": [1]})
    assert app.published_version_id is None
    v1 = await apps.publish(
        team_id, app.id, nodes=[{"nodeId": "a"}], edges=[], chat_config={}, version_name="v1"
    )
    await apps.update_app(team_id, app.id, draft={"nodes": [2]}, name="Helper 2")
    v2 = await apps.publish(
        team_id, app.id, nodes=[{"nodeId": "b"}], edges=[], chat_config={}, version_name="v2"
    )
    versions = await apps.list_versions(team_id, app.id)
    assert [v.id for v in versions] == [v2.id, v1.id]
    current = await apps.get_app(team_id, app.id)
    assert current.published_version_id == v2.id and current.name == "Helper 2"
    assert (await apps.get_version(team_id, app.id, v1.id)).nodes == [{"nodeId": "a"}]
    with pytest.raises(ValueError, match="cannot change"):
        await apps.update_app(team_id, app.id, published_version_id="x")


async def test_an_apps_draft_reads_back_as_written_and_is_decoded_only_when_asked_for(
    database: Database,
) -> None:
    """A chat reads its app on every request and runs the published version: the draft (a FastGPT app's
    graph, kilobytes of JSON) is handed over as stored and decoded the first time ``draft`` is read."""
    apps = SqlAppRepository(database)
    team_id, _ = await _team_and_owner(database)
    draft = {"nodes": [{"nodeId": "n1", "name": "回复 ✓", "inputs": [{"value": None}]}], "edges": []}
    app = await apps.create_app(team_id, "Drafty", type="advanced", draft=draft)
    empty = await apps.create_app(team_id, "Empty", type="advanced")
    read = await apps.get_app(team_id, app.id)
    if database.dialect == "sqlite":
        assert isinstance(read.stored_draft, str)  # not decoded by the read
    assert read.draft == draft and read.draft is read.draft  # decoded once, then kept
    assert isinstance(read.stored_draft, dict)
    assert (await apps.get_app(team_id, empty.id)).draft == {}
    assert [a.draft for a in await apps.list_apps(team_id)] == [draft, {}]


async def test_apps_of_another_team_are_not_found(database: Database) -> None:
    apps = SqlAppRepository(database)
    team_id, _ = await _team_and_owner(database)
    other = await SqlTeamRepository(database).create_team("Other")
    app = await apps.create_app(team_id, "Mine")
    with pytest.raises(NotFound):
        await apps.get_app(other.id, app.id)
    with pytest.raises(NotFound):
        await apps.delete_app(other.id, app.id)
    assert await apps.list_apps(other.id) == []
    await apps.delete_app(team_id, app.id)
    assert await apps.list_apps(team_id) == []


async def test_chat_items_keep_order_and_unique_ids(database: Database) -> None:
    apps, chats = SqlAppRepository(database), SqlChatRepository(database)
    team_id, _ = await _team_and_owner(database)
    app = await apps.create_app(team_id, "Bot")
    chat = await chats.upsert_chat(team_id, app.id, "chat-1", title="Hello", variables={"lang": "en"})
    assert chat.variables == {"lang": "en"}
    for i, obj in enumerate(["Human", "AI", "Human", "AI"]):
        item = ChatItemRecord(
            data_id=f"d{i}", chat_id="chat-1", app_id=app.id, obj=obj, value=[{"text": str(i)}]
        )
        await chats.add_item(team_id, item)
    with pytest.raises(Conflict):
        await chats.add_item(
            team_id, ChatItemRecord(data_id="d0", chat_id="chat-1", app_id=app.id, obj="AI", value=[])
        )
    items, total = await chats.list_items(team_id, app.id, "chat-1", offset=1, limit=2)
    assert total == 4 and [i.data_id for i in items] == ["d1", "d2"]
    await chats.update_item(team_id, app.id, "chat-1", "d1", user_good_feedback="yes")
    await chats.delete_item(team_id, app.id, "chat-1", "d2")
    items, total = await chats.list_items(team_id, app.id, "chat-1")
    assert total == 3 and items[0].user_good_feedback is None and items[1].user_good_feedback == "yes"
    updated = await chats.upsert_chat(
        team_id, app.id, "chat-1", variables={"lang": "fr"}, metadata={"ip": "x"}
    )
    assert updated.variables == {"lang": "fr"} and updated.title == "Hello"
    listed, count = await chats.list_chats(team_id, app.id)
    assert count == 1 and listed[0].chat_id == "chat-1"
    other = await SqlTeamRepository(database).create_team("Other")
    assert await chats.get_chat(other.id, app.id, "chat-1") is None
    with pytest.raises(NotFound):
        await chats.upsert_chat(other.id, app.id, "chat-1")
    await chats.delete_chat(team_id, app.id, "chat-1")
    assert await chats.get_chat(team_id, app.id, "chat-1") is None
    assert (await chats.list_items(team_id, app.id, "chat-1"))[1] == 0


async def test_usage_summary_groups_by_day_and_app(database: Database) -> None:
    usage = SqlUsageRepository(database)
    team_id, _ = await _team_and_owner(database)
    now = utcnow()
    for app_id, tokens, when in [
        ("a", 10, now),
        ("a", 5, now),
        ("b", 7, now),
        ("a", 1, now - timedelta(days=2)),
    ]:
        await usage.record(
            UsageRecord(team_id, app_id, "api", "chat", "m", tokens, 1, tokens / 10, created_at=when)
        )
    rows = await usage.summarize(team_id)
    today = now.strftime("%Y-%m-%d")
    by_key = {(r.day, r.app_id): r for r in rows}
    assert by_key[(today, "a")].input_tokens == 15 and by_key[(today, "a")].records == 2
    assert by_key[(today, "b")].total_points == pytest.approx(0.7)
    assert len(rows) == 3 and rows[0].day == today
    assert [r.app_id for r in await usage.summarize(team_id, app_id="b")] == ["b"]
    assert len(await usage.summarize(team_id, days=1)) == 2
