"""The chat hot path's storage on SQLite and PostgreSQL: a turn in one transaction, the history a turn
reads, the key identity cache and the written-behind usage counters."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy.exc import IntegrityError

from fathom.store.db import Database
from fathom.store.protocols import ChatItemRecord, ChatTurn, Conflict, NotFound, UsageRecord
from fathom.store.repositories import (
    SqlApiKeyRepository,
    SqlAppRepository,
    SqlChatRepository,
    SqlTeamRepository,
    SqlUsageRepository,
)
from fathom.store.repositories.chat_turns import SqlChatTurnRepository


async def _team_app(db: Database) -> tuple[str, str, str]:
    teams = SqlTeamRepository(db)
    team = await teams.create_team("Acme")
    owner = await teams.add_member(team.id, "alice", "owner")
    app = await SqlAppRepository(db).create_app(team.id, "Bot", type="advanced")
    return team.id, owner.id, app.id


async def _stored_items(database: Database, team: str, app: str, chat_id: str) -> list[ChatItemRecord]:
    """Every stored item of the chat, whole (status, heartbeat, timings), oldest first."""
    items, _ = await SqlChatRepository(database).list_items(team, app, chat_id)
    return items


def _item(data_id: str, obj: str, text: str, app_id: str, chat_id: str, **extra: object) -> ChatItemRecord:
    value = [{"type": "text", "text": {"content": text}}]
    return ChatItemRecord(data_id=data_id, chat_id=chat_id, app_id=app_id, obj=obj, value=value, **extra)  # type: ignore[arg-type]


async def test_a_turn_stores_chat_items_and_usage_together_and_the_next_turn_appends(
    database: Database,
) -> None:
    team, member, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)
    usage = UsageRecord(team, app, "api", "AI chat", "m", 3, 4, 0.5)
    first = ChatTurn(
        team,
        app,
        "c1",
        new_chat=True,
        variables={"lang": "en"},
        title="hello",
        metadata={"a": 1},
        member_id=member,
        items=(
            _item("h1", "Human", "hello", app, "c1"),
            _item("a1", "AI", "hi", app, "c1", duration_seconds=0.5),
        ),
        usages=(usage,),
    )
    await turns.save_turn(first)
    second = ChatTurn(
        team,
        app,
        "c1",
        new_chat=False,
        variables={"lang": "fr"},
        metadata={"b": 2},
        items=(_item("h2", "Human", "again", app, "c1"), _item("a2", "AI", "re", app, "c1")),
    )
    await turns.save_turn(second)
    history = await turns.load_history(team, app, "c1", limit=3)
    assert history.chat is not None
    assert history.chat.title == "hello" and history.chat.variables == {"lang": "fr"}
    assert history.chat.metadata == {"a": 1, "b": 2}
    assert [i.data_id for i in history.items] == ["a1", "h2", "a2"]  # the newest three, oldest first
    items, total = await SqlChatRepository(database).list_items(team, app, "c1")
    assert total == 4 and [i.data_id for i in items] == ["h1", "a1", "h2", "a2"]
    assert await turns.has_item(team, app, "c1", "a1") and not await turns.has_item(team, app, "c1", "zz")
    summary = await SqlUsageRepository(database).summarize(team)
    assert [(r.input_tokens, r.output_tokens, r.records) for r in summary] == [(3, 4, 1)]
    assert (await turns.load_history(team, app, "other", limit=5)).chat is None


async def test_a_resumed_turn_extends_the_paused_item(database: Database) -> None:
    team, _, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)
    paused = _item("a1", "AI", "pick one", app, "c2", response_data=[{"n": 1}], duration_seconds=1.0)
    await turns.save_turn(
        ChatTurn(
            team,
            app,
            "c2",
            new_chat=True,
            variables={},
            items=(_item("h1", "Human", "go", app, "c2"), paused),
        )
    )
    extended = _item("a1", "AI", "picked", app, "c2", response_data=[{"n": 2}], duration_seconds=0.5)
    await turns.save_turn(ChatTurn(team, app, "c2", new_chat=False, variables={}, resumed=extended))
    history = await turns.load_history(team, app, "c2", limit=10)
    assert len(history.items) == 2 and history.items[-1].value == extended.value
    stored, _ = await SqlChatRepository(database).list_items(team, app, "c2")  # what the run does not read
    ai = stored[-1]
    assert ai.response_data == [{"n": 1}, {"n": 2}] and ai.duration_seconds == pytest.approx(1.5)


async def test_a_continued_chat_reads_only_what_its_run_uses(database: Database) -> None:
    team, member, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)
    items = (
        _item("h1", "Human", "hi", app, "c4"),
        _item(
            "a1", "AI", "hello", app, "c4", response_data=[{"moduleName": "AI chat"}], duration_seconds=2.0
        ),
    )
    await turns.save_turn(
        ChatTurn(team, app, "c4", new_chat=True, variables={}, member_id=member, items=items)
    )
    history = await turns.load_history(team, app, "c4", limit=10)
    assert [(i.data_id, i.obj, i.value) for i in history.items] == [
        (i.data_id, i.obj, i.value) for i in items
    ]
    assert not hasattr(history.items[-1], "response_data")  # a run's node details stay in the database
    assert (
        history.chat is not None and history.chat.member_id == member and history.chat.owner_kind == "member"
    )


async def test_a_continued_turn_sets_the_chat_variables_and_time_and_keeps_its_title_and_metadata(
    database: Database,
) -> None:
    team, member, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)
    first = (_item("h1", "Human", "hi", app, "c5"), _item("a1", "AI", "hello", app, "c5"))
    await turns.save_turn(
        ChatTurn(
            team,
            app,
            "c5",
            new_chat=True,
            variables={"n": 1},
            title="hi",
            metadata={"a": 1},
            member_id=member,
            items=first,
        )
    )
    before = await turns.load_history(team, app, "c5", limit=10)
    assert before.chat is not None
    second = (_item("h2", "Human", "again", app, "c5"), _item("a2", "AI", "re", app, "c5"))
    await turns.save_turn(ChatTurn(team, app, "c5", new_chat=False, variables={"n": 2}, items=second))
    after = await turns.load_history(team, app, "c5", limit=10)
    assert after.chat is not None and after.chat.variables == {"n": 2}
    assert (after.chat.title, after.chat.metadata) == ("hi", {"a": 1})
    assert after.chat.updated_at >= before.chat.updated_at
    assert [i.data_id for i in after.items] == ["h1", "a1", "h2", "a2"]


async def test_a_continued_turn_of_a_chat_that_is_gone_stores_nothing(database: Database) -> None:
    team, _, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)
    items = (_item("h1", "Human", "hi", app, "gone"), _item("a1", "AI", "hello", app, "gone"))
    with pytest.raises(NotFound):
        await turns.save_turn(ChatTurn(team, app, "gone", new_chat=False, variables={}, items=items))
    assert await _stored_items(database, team, app, "gone") == []


async def test_a_chat_without_items_has_an_empty_history(database: Database) -> None:
    team, _, app = await _team_app(database)
    await SqlChatRepository(database).upsert_chat(team, app, "empty", variables={"k": "v"})
    history = await SqlChatTurnRepository(database).load_history(team, app, "empty", limit=10)
    assert history.chat is not None and history.chat.variables == {"k": "v"}
    assert history.items == []


async def test_a_first_turn_without_a_chat_id_stores_its_chat_and_items_and_the_next_turn_appends(
    database: Database,
) -> None:
    """The usual API first turn (a chat id made for it, no usage yet): the chat row as sent, the items
    numbered from 1 with the running AI item's heartbeat set, and the next turn numbered after them."""
    team, member, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)
    first = ChatTurn(
        team,
        app,
        "gen1",
        new_chat=True,
        variables={"lang": "en"},
        title="hello",
        metadata={"a": 1},
        member_id=member,
        chat_id_generated=True,
        items=(
            _item("h1", "Human", "hello", app, "gen1"),
            _item("a1", "AI", "", app, "gen1", status="running"),
        ),
    )
    await turns.save_turn(first)
    chat = await SqlChatRepository(database).get_chat(team, app, "gen1")
    assert chat is not None
    assert (chat.title, chat.variables, chat.metadata) == ("hello", {"lang": "en"}, {"a": 1})
    assert chat.member_id == member
    stored = await _stored_items(database, team, app, "gen1")
    assert [(i.data_id, i.obj, i.status) for i in stored] == [("h1", "Human", None), ("a1", "AI", "running")]
    assert stored[1].heartbeat_at is not None
    follow = (_item("h2", "Human", "again", app, "gen1"), _item("a2", "AI", "ok", app, "gen1"))
    await turns.save_turn(ChatTurn(team, app, "gen1", new_chat=False, variables={"lang": "fr"}, items=follow))
    history = await turns.load_history(team, app, "gen1", limit=10)
    assert [i.data_id for i in history.items] == ["h1", "a1", "h2", "a2"]  # numbered after the first two
    assert history.chat is not None and history.chat.variables == {"lang": "fr"}


async def test_a_failing_turn_stores_nothing(database: Database) -> None:
    team, _, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)
    twice = (_item("same", "Human", "a", app, "c3"), _item("same", "AI", "b", app, "c3"))
    with pytest.raises(IntegrityError):
        await turns.save_turn(
            ChatTurn(team, app, "c3", new_chat=True, variables={}, chat_id_generated=True, items=twice)
        )
    assert (await turns.load_history(team, app, "c3", limit=10)).chat is None


async def test_two_first_turns_on_one_chat_id_both_land(database: Database) -> None:
    team, _, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)
    for n in (1, 2):
        items = (_item(f"h{n}", "Human", "q", app, "race"), _item(f"a{n}", "AI", "a", app, "race"))
        await turns.save_turn(ChatTurn(team, app, "race", new_chat=True, variables={"n": n}, items=items))
    history = await turns.load_history(team, app, "race", limit=10)
    assert history.chat is not None and history.chat.variables == {"n": 2}
    assert [i.data_id for i in history.items] == ["h1", "a1", "h2", "a2"]


_OWNERS = {
    "member": {"owner_kind": "member", "member_id": "m-1"},
    "key": {"owner_kind": "key", "api_key_id": "k-1"},
    "visitor": {"owner_kind": "visitor", "share_id": "s-1", "out_link_uid": "u-1"},
    "visitor-without-uid": {"owner_kind": "visitor", "share_id": "s-1", "out_link_uid": None},
}
_OTHERS = {
    "member": {"owner_kind": "member", "member_id": "m-2"},
    "key": {"owner_kind": "key", "api_key_id": "k-2"},
    "visitor": {"owner_kind": "visitor", "share_id": "s-1", "out_link_uid": "u-2"},
    "visitor-without-uid": {"owner_kind": "visitor", "share_id": "s-2", "out_link_uid": None},
}


@pytest.mark.parametrize("kind", list(_OWNERS))
async def test_a_first_turn_on_a_chat_id_of_the_same_owner_lands_and_of_another_owner_is_refused(
    database: Database, kind: str
) -> None:
    """A chatId the caller chose, twice as a first turn: the same owner's second turn updates the chat
    and adds its items; a different owner of the same kind, or of another kind, stores nothing."""
    team, _, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)

    def turn(n: int, owner: dict[str, Any]) -> ChatTurn:
        items = (_item(f"h{n}", "Human", "q", app, "mine"), _item(f"a{n}", "AI", "a", app, "mine"))
        return ChatTurn(team, app, "mine", new_chat=True, variables={"n": n}, items=items, **owner)

    await turns.save_turn(turn(1, _OWNERS[kind]))
    await turns.save_turn(turn(2, _OWNERS[kind]))
    other_kind = {"owner_kind": "key", "api_key_id": "k-9"} if kind != "key" else _OTHERS["member"]
    for n, other in ((3, _OTHERS[kind]), (4, other_kind)):
        with pytest.raises(Conflict):
            await turns.save_turn(turn(n, other))
    history = await turns.load_history(team, app, "mine", limit=10)
    assert history.chat is not None and history.chat.variables == {"n": 2}
    assert [i.data_id for i in history.items] == ["h1", "a1", "h2", "a2"]


async def test_the_key_identity_cache_forgets_a_revoked_key_at_once(database: Database) -> None:
    team, member, _ = await _team_app(database)
    keys = SqlApiKeyRepository(database)
    record, plain = await keys.create_key(team, member)
    found = await keys.find_identity(plain)
    assert found is not None and found[0].id == record.id and found[1] == "owner"
    assert await keys.find_identity(plain) == found  # cached
    await keys.revoke_key(team, record.id)
    assert await keys.find_identity(plain) is None
    assert await keys.find_identity("fathom-unknown") is None


async def test_usage_counters_are_written_behind_and_flushed_on_close(database: Database) -> None:
    team, member, _ = await _team_app(database)
    keys = SqlApiKeyRepository(database)
    record, _ = await keys.create_key(team, member)
    await keys.record_use(record.id, 1.0)
    await keys.record_use(record.id, 0.25)
    await keys.aclose()
    stored = (await SqlApiKeyRepository(database).list_keys(team))[0]
    assert stored.usage_points == pytest.approx(1.25) and stored.last_used_at is not None


async def test_a_turn_begun_running_is_finished_in_place_and_its_heartbeat_decides_interrupted(
    database: Database,
) -> None:
    """The start stores the question and a running answer; heartbeats refresh only running items;
    finishing replaces the answer (no third item), stores the usage and clears the status; a running
    answer whose heartbeat is older than the lease reads as interrupted."""
    from datetime import UTC, datetime, timedelta

    from fathom.chat.turn_lease import chat_item_state

    team, member, app = await _team_app(database)
    turns = SqlChatTurnRepository(database)
    begun = ChatTurn(
        team,
        app,
        "c-run",
        new_chat=True,
        variables={},
        title="q",
        member_id=member,
        items=(
            _item("h", "Human", "q", app, "c-run"),
            ChatItemRecord("a", "c-run", app, "AI", [], status="running"),
        ),
    )
    await turns.save_turn(begun)
    # the run's history read sees the answer's status; the item list has its heartbeat and timings
    assert [(i.obj, i.status) for i in (await turns.load_history(team, app, "c-run", 10)).items] == [
        ("Human", None),
        ("AI", "running"),
    ]
    items = await _stored_items(database, team, app, "c-run")
    assert [(i.obj, i.status) for i in items] == [("Human", None), ("AI", "running")]
    started = items[1].heartbeat_at
    assert started is not None
    assert chat_item_state(items[1], 30.0) == "running"
    later = started + timedelta(seconds=31)
    assert (
        chat_item_state(items[1], 30.0, now=later if later.tzinfo else later.replace(tzinfo=UTC))
        == "interrupted"
    )

    await turns.heartbeat([(app, "c-run", "a"), (app, "c-run", "h")])
    beaten = await _stored_items(database, team, app, "c-run")
    assert beaten[0].heartbeat_at is None and beaten[1].heartbeat_at is not None
    assert beaten[1].heartbeat_at >= started

    usage = UsageRecord(team, app, "api", "AI chat", "m", 3, 4, 0.5)
    answer = _item("a", "AI", "the answer", app, "c-run", duration_seconds=1.5)
    finish = ChatTurn(team, app, "c-run", new_chat=False, variables={"k": "v"}, usages=(usage,))
    assert await turns.finish_turn(finish, answer, variables_changed=True) is True
    history = await turns.load_history(team, app, "c-run", 10)
    assert [(i.obj, i.status) for i in history.items] == [("Human", None), ("AI", None)]
    finished = await _stored_items(database, team, app, "c-run")
    assert [(i.obj, i.status, i.heartbeat_at) for i in finished] == [
        ("Human", None, None),
        ("AI", None, None),
    ]
    assert finished[1].value == answer.value and finished[1].duration_seconds == 1.5
    assert history.items[1].value == answer.value
    assert history.chat is not None and history.chat.variables == {"k": "v"}
    assert chat_item_state(finished[1], 30.0, now=datetime.now(UTC) + timedelta(days=1)) is None
    assert [row.total_points for row in await SqlUsageRepository(database).summarize(team)] == [0.5]

    # the chat deleted while the run went on: nothing to replace, the usage is kept all the same
    await SqlChatRepository(database).delete_chat(team, app, "c-run")
    assert await turns.finish_turn(finish, answer, variables_changed=False) is False
