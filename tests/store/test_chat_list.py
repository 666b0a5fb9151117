"""The one chat-list query (``SqlChatRepository.list_chats``) and the history writes beside it, on both
backends: whose chats a listing selects (the ownership rule as SQL), the source and date filters, pinned
first, and clearing one owner's chats of one source."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fathom.chat.ownership import ChatCaller
from fathom.store.db import Database
from fathom.store.models import utcnow
from fathom.store.protocols import ChatItemRecord, NotFound
from fathom.store.repositories import SqlAppRepository, SqlChatRepository, SqlTeamRepository

ALICE = ChatCaller("member", member_id="m-alice")
BOB = ChatCaller("member", member_id="m-bob")
KEY = ChatCaller("key", member_id="m-alice", api_key_id="k-1")
VISITOR = ChatCaller("visitor", share_id="s-1", out_link_uid="u-1")
OTHER_VISITOR = ChatCaller("visitor", share_id="s-1", out_link_uid="u-2")
NOBODY = ChatCaller(None)

# chat id, source, owner
CHATS = [
    ("a-online", "online", ALICE),
    ("a-test", "test", ALICE),
    ("b-online", "online", BOB),
    ("k-api", "api", KEY),
    ("v-share", "share", VISITOR),
]


async def _seed(db: Database) -> tuple[SqlChatRepository, str, str]:
    team = await SqlTeamRepository(db).create_team("Acme")
    app = await SqlAppRepository(db).create_app(team.id, "Bot")
    chats = SqlChatRepository(db)
    for chat_id, source, owner in CHATS:
        await chats.upsert_chat(team.id, app.id, chat_id, title=chat_id, source=source)
        await chats.update_chat(
            team.id,
            app.id,
            chat_id,
            owner_kind=owner.kind,
            member_id=owner.member_id,
            api_key_id=owner.api_key_id,
            share_id=owner.share_id,
            out_link_uid=owner.out_link_uid,
        )
    return chats, team.id, app.id


@pytest.mark.parametrize(
    ("owner", "source", "exclude_source", "expected"),
    [
        (None, None, None, {"a-online", "a-test", "b-online", "k-api", "v-share"}),
        (ALICE, None, None, {"a-online", "a-test"}),
        (ALICE, None, "test", {"a-online"}),
        (ALICE, "test", None, {"a-test"}),
        (BOB, None, None, {"b-online"}),
        (KEY, None, None, {"k-api"}),  # a key owns what it starts, not its member's chats
        (VISITOR, None, None, {"v-share"}),
        (OTHER_VISITOR, None, None, set()),  # another visitor of the same link
        (NOBODY, None, None, set()),  # an expired link's visitor owns nothing
    ],
)
async def test_a_listing_selects_the_owners_chats_of_the_source(
    database: Database,
    owner: ChatCaller | None,
    source: str | None,
    exclude_source: str | None,
    expected: set[str],
) -> None:
    chats, team_id, app_id = await _seed(database)
    listed, total = await chats.list_chats(
        team_id, app_id, owner=owner, source=source, exclude_source=exclude_source
    )
    assert {c.chat_id for c in listed} == expected and total == len(expected)


async def test_a_listing_puts_pinned_chats_first_then_the_latest_and_pages(database: Database) -> None:
    chats, team_id, app_id = await _seed(database)
    await chats.update_chat(team_id, app_id, "b-online", top=True)
    await chats.update_chat(team_id, app_id, "k-api", title="renamed")  # now the latest unpinned
    listed, total = await chats.list_chats(team_id, app_id, offset=0, limit=2)
    assert total == 5 and [c.chat_id for c in listed] == ["b-online", "k-api"]
    assert listed[0].top and listed[1].title == "renamed"
    rest, _ = await chats.list_chats(team_id, app_id, offset=2, limit=10)
    assert len(rest) == 3 and "b-online" not in {c.chat_id for c in rest}


async def test_a_listing_since_keeps_chats_updated_since_then(database: Database) -> None:
    chats, team_id, app_id = await _seed(database)
    assert (await chats.list_chats(team_id, app_id, since=utcnow() + timedelta(minutes=1)))[1] == 0
    assert (await chats.list_chats(team_id, app_id, since=utcnow() - timedelta(minutes=1)))[1] == 5


async def test_clearing_deletes_only_the_owners_chats_of_that_source_and_their_items(
    database: Database,
) -> None:
    chats, team_id, app_id = await _seed(database)
    await chats.add_item(team_id, ChatItemRecord("d1", "a-online", app_id, "Human", [{"text": "hi"}]))
    assert await chats.clear_chats(team_id, app_id, source="online", owner=ALICE) == ["a-online"]
    assert await chats.get_chat(team_id, app_id, "a-online") is None
    assert (await chats.list_items(team_id, app_id, "a-online"))[1] == 0
    left, _ = await chats.list_chats(team_id, app_id)
    assert {c.chat_id for c in left} == {"a-test", "b-online", "k-api", "v-share"}
    assert await chats.clear_chats(team_id, app_id, source="share", owner=NOBODY) == []


async def test_renaming_an_unknown_chat_is_not_found(database: Database) -> None:
    chats, team_id, app_id = await _seed(database)
    with pytest.raises(NotFound):
        await chats.update_chat(team_id, app_id, "no-such-chat", title="x")
