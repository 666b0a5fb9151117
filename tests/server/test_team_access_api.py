"""Giving invited members access through the HTTP API, on SQLite and PostgreSQL (issue 19 follow-up):
app and knowledge-base collaborators (list, grant, revoke), members' roles, and removing a member, whose
keys and sessions stop working on their very next request."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from itertools import count

import httpx
import pytest
from live_support import LiveServer, backend_settings, ok, start_live_server
from security_world import run_on

from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn

MODEL = "scripted-chat"
LOGIN = "/api/support/user/account/loginByPassword"
ACCEPT = "/api/support/user/team/invitation/accept"
APP_GRANT = "/api/core/app/collaborator/update"
APP_REVOKE = "/api/core/app/collaborator/delete"
APP_LIST = "/api/core/app/collaborator/list"
ROLE = "/api/support/user/team/member/updateRole"
REMOVE = "/api/support/user/team/member/delete"
PASSWORD = "correct horse"
_names = count()


@dataclass
class Team:
    server: LiveServer
    owner: httpx.Client  # the owner's team-wide key
    app_id: str
    dataset_id: str


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        server.set_script(lambda request: text_turn("granted answer"))
        yield server


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def team(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[Team]:
    settings = backend_settings(
        request, tmp_path_factory, "team_access", openai_base_url=scripted.base_url, chat_model=MODEL
    )
    for server in start_live_server(settings):
        with server.client(server.admin_key) as owner:
            body = {"name": "Bot", "type": "simple", "simpleConfig": {"model": MODEL}}
            app_id = ok(owner.post("/api/core/app/create", json=body))
            dataset_id = ok(owner.post("/api/core/dataset/create", json={"name": "KB"}))
            yield Team(server, owner, str(app_id), str(dataset_id))


@dataclass
class Member:
    id: str
    session: httpx.Client  # signed in by accepting the invitation, sending its CSRF token
    key: str  # a team-wide key of the member


def invited(team: Team, role: str = "member") -> Member:
    link = ok(team.owner.post("/api/support/user/team/invitation/create", json={"role": role}))["token"]
    session = team.server.client()
    body = {"token": link, "username": f"joiner{next(_names)}", "password": PASSWORD}
    joined = ok(session.post(ACCEPT, json=body))
    session.headers["X-CSRF-Token"] = joined["csrfToken"]
    member_id = str(joined["user"]["tmbId"])

    async def make_key(platform: Platform) -> str:
        return (await platform.api_keys.create_key(joined["user"]["teamId"], member_id))[1]

    return Member(member_id, session, run_on(team.server, make_key))


def chat(client: httpx.Client, app_id: str) -> httpx.Response:
    body = {"appId": app_id, "messages": [{"role": "user", "content": "hello"}]}
    return client.post("/api/v1/chat/completions", json=body)


def test_an_invited_member_chats_with_an_app_only_while_granted(team: Team) -> None:
    member = invited(team)
    with closing(member.session):
        assert chat(member.session, team.app_id).status_code == 403
        ok(
            team.owner.post(
                APP_GRANT, json={"appId": team.app_id, "tmbIds": [member.id], "permission": "read"}
            )
        )
        listed = ok(team.owner.get(APP_LIST, params={"appId": team.app_id}))
        assert [(c["tmbId"], c["per"], c["permission"]["value"]) for c in listed] == [(member.id, "read", 4)]
        reply = chat(member.session, team.app_id)
        assert reply.status_code == 200, reply.text
        assert reply.json()["choices"][0]["message"]["content"] == "granted answer"
        with team.server.client(member.key) as key_client:
            assert chat(key_client, team.app_id).status_code == 200
            # read is not manage: the member may not hand the app on
            refused = key_client.post(
                APP_GRANT, json={"appId": team.app_id, "tmbIds": [member.id], "permission": 7}
            )
            assert refused.status_code == 403, refused.text
            ok(team.owner.delete(APP_REVOKE, params={"appId": team.app_id, "tmbId": member.id}))
            assert chat(key_client, team.app_id).status_code == 403
        assert chat(member.session, team.app_id).status_code == 403
        assert ok(team.owner.get(APP_LIST, params={"appId": team.app_id})) == []


def test_a_member_with_manage_on_a_knowledge_base_grants_it_to_another(team: Team) -> None:
    manager, reader = invited(team), invited(team)
    detail = {"id": team.dataset_id}
    grant = "/api/core/dataset/collaborator/update"
    with closing(manager.session), closing(reader.session):
        assert reader.session.get("/api/core/dataset/detail", params=detail).status_code == 403
        body = {"datasetId": team.dataset_id, "tmbIds": [manager.id], "permission": 7}  # FastGPT's value
        ok(team.owner.post(grant, json=body))
        ok(
            manager.session.post(
                grant, json={"datasetId": team.dataset_id, "tmbIds": [reader.id], "permission": "read"}
            )
        )
        ok(reader.session.get("/api/core/dataset/detail", params=detail))
        listed = ok(
            manager.session.get("/api/core/dataset/collaborator/list", params={"datasetId": team.dataset_id})
        )
        assert {(c["tmbId"], c["per"]) for c in listed} == {(manager.id, "manage"), (reader.id, "read")}
        revoke = {"datasetId": team.dataset_id, "tmbId": reader.id}
        ok(manager.session.delete("/api/core/dataset/collaborator/delete", params=revoke))
        assert reader.session.get("/api/core/dataset/detail", params=detail).status_code == 403


def test_bad_grants_name_the_field_and_another_teams_member_is_not_found(team: Team) -> None:
    async def outsider(platform: Platform) -> str:
        other = await platform.teams.create_team(f"Other {next(_names)}")
        return (await platform.teams.add_member(other.id, "mallory", "owner")).id

    stranger = run_on(team.server, outsider)
    base = {"appId": team.app_id, "permission": "read"}
    response = team.owner.post(APP_GRANT, json=base | {"tmbIds": [stranger]})
    assert response.status_code == 404 and "tmbId" in response.json()["message"], response.text
    assert ok(team.owner.get(APP_LIST, params={"appId": team.app_id})) == []
    for body, field in [
        (base | {"permission": "admin", "tmbIds": [stranger]}, "permission"),
        (base | {"tmbIds": []}, "tmbIds"),
    ]:
        response = team.owner.post(APP_GRANT, json=body)
        assert response.status_code == 400 and response.json()["message"].startswith(field), response.text


def test_roles_change_at_once_and_the_last_owner_stays(team: Team) -> None:
    member = invited(team)
    with closing(member.session), team.server.client(member.key) as key_client:
        assert key_client.get("/api/support/user/team/member/list").status_code == 403  # caches the key
        ok(team.owner.post(ROLE, json={"tmbId": member.id, "role": "admin"}))
        assert key_client.get("/api/support/user/team/member/list").status_code == 200  # the new role, now
        owner_id = ok(team.owner.get("/api/v1/whoami"))["tmbId"]
        # an admin neither makes owners nor changes them
        for body in ({"tmbId": member.id, "role": "owner"}, {"tmbId": owner_id, "role": "member"}):
            response = member.session.post(ROLE, json=body)
            assert response.status_code == 403, response.text
        assert member.session.delete(REMOVE, params={"tmbId": owner_id}).status_code == 403
        last = team.owner.post(ROLE, json={"tmbId": owner_id, "role": "admin"})
        assert last.status_code == 409 and "last owner" in last.json()["message"], last.text
        ok(team.owner.post(ROLE, json={"tmbId": member.id, "role": "member"}))
        assert key_client.get("/api/support/user/team/member/list").status_code == 403
        assert member.session.get("/api/support/user/team/member/list").status_code == 403
        assert team.owner.post(ROLE, json={"tmbId": member.id, "role": "boss"}).status_code == 400


def test_a_removed_members_key_and_session_stop_at_once(team: Team) -> None:
    member = invited(team)
    ok(team.owner.post(APP_GRANT, json={"appId": team.app_id, "tmbIds": [member.id], "permission": "read"}))
    with closing(member.session), team.server.client(member.key) as key_client:
        assert chat(key_client, team.app_id).status_code == 200  # the key is in the cache now
        assert chat(member.session, team.app_id).status_code == 200
        ok(team.owner.delete(REMOVE, params={"tmbId": member.id}))
        assert chat(key_client, team.app_id).status_code == 401
        assert chat(member.session, team.app_id).status_code == 401
        assert key_client.get("/api/v1/whoami").status_code == 401
    members = ok(team.owner.get("/api/support/user/team/member/list"))
    assert member.id not in [m["tmbId"] for m in members]
    assert team.owner.delete(REMOVE, params={"tmbId": member.id}).status_code == 404
