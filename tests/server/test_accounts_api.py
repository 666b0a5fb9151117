"""Accounts through the HTTP API, on SQLite and PostgreSQL, with two replicas on one database (issue 19
item 1): the root user's password sign-in, the session cookie's attributes, CSRF refusal of cookie
requests without the token (Bearer requests unaffected), sign-out and password change revoking sessions,
the sign-in rate limit per username and per client IP holding across replicas, invitations (one use,
expiry, roles) and keys made in a session belonging to the session's member."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass

import httpx
import pytest
from live_support import LiveServer, backend_database_url, free_port, ok, start_live_server

from fathom.config import Settings

PER_USER = 3
PER_IP = 6
LOGIN = "/api/support/user/account/loginByPassword"
WHO = "/api/support/user/account/tokenLogin"
INVITE = "/api/support/user/team/invitation/create"
ACCEPT = "/api/support/user/team/invitation/accept"


@dataclass
class Replicas:
    a: LiveServer
    b: LiveServer
    root_password: str


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def replicas(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    root = tmp_path_factory.mktemp(f"accounts-{request.param}")
    database_url = backend_database_url(request, "accounts") or f"sqlite:///{root / 'fathom.db'}"

    def settings() -> Settings:
        return Settings(
            data_dir=root / "data",
            database_url=database_url,
            port=free_port(),
            workers=0,
            signin_max_failures_per_user=PER_USER,
            signin_max_failures_per_ip=PER_IP,
        )

    for a in start_live_server(settings()):
        for b in start_live_server(settings(), replica=True):
            assert a.boot.root_password and b.boot.root_password is None  # printed once, by the first
            yield Replicas(a, b, a.boot.root_password)


def sign_in(server: LiveServer, username: str, password: str) -> tuple[httpx.Client, str]:
    """A cookie client signed in, and its CSRF token."""
    client = server.client()
    data = ok(client.post(LOGIN, json={"username": username, "password": password}))
    return client, str(data["csrfToken"])


def csrf(token: str) -> dict[str, str]:
    return {"X-CSRF-Token": token}


def invite(replicas: Replicas, role: str = "member", hours: float | None = None) -> str:
    owner, token = sign_in(replicas.a, "root", replicas.root_password)
    with closing(owner):
        body: dict[str, object] = {"role": role} | ({"expiresHours": hours} if hours is not None else {})
        data = ok(owner.post(INVITE, json=body, headers=csrf(token)))
    assert data["link"] == f"/invite/{data['token']}"
    return str(data["token"])


def join(replicas: Replicas, username: str, password: str = "correct horse", role: str = "member") -> str:
    link = invite(replicas, role)
    with replicas.b.client() as client:
        joined = ok(client.post(ACCEPT, json={"token": link, "username": username, "password": password}))
    assert joined["user"]["role"] == role
    return str(joined["user"]["tmbId"])


def test_the_root_user_signs_in_with_the_password_printed_on_first_start(replicas: Replicas) -> None:
    with replicas.a.client() as client:
        response = client.post(LOGIN, json={"username": "ROOT", "password": replicas.root_password})
        assert response.status_code == 200, response.text
        cookie = response.headers["set-cookie"]
        assert "fathom_session=" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
        assert "Secure" not in cookie  # plain http on loopback
        data = response.json()["data"]
        who = ok(client.get(WHO))
    assert who["username"] == "root" and who["role"] == "owner"
    assert who["tmbId"] == replicas.a.boot.member_id and who["csrfToken"] == data["csrfToken"]
    assert who["keyId"] is None


def test_a_cookie_request_without_the_csrf_token_is_refused_and_changes_nothing(replicas: Replicas) -> None:
    owner, token = sign_in(replicas.a, "root", replicas.root_password)
    with closing(owner):
        app_id = ok(owner.post("/api/core/app/create", json={"name": "csrf"}, headers=csrf(token)))
        for headers in ({}, csrf("wrong"), {"X-CSRF-Token": "caf\u00e9".encode("latin-1")}):
            refused = owner.post("/api/core/app/update", json={"appId": app_id, "name": "x"}, headers=headers)
            assert refused.status_code == 403, refused.text
            assert refused.json()["statusText"] == "csrfTokenInvalid"
            assert "X-CSRF-Token" in refused.json()["message"]
        # FastGPT's routes take any verb: a GET that deletes is refused the same way
        assert owner.get("/api/core/app/del", params={"appId": app_id}).status_code == 403
        detail = ok(owner.get("/api/core/app/detail", params={"appId": app_id}, headers=csrf(token)))
        assert detail["name"] == "csrf"
    # a Bearer request is a key request, whatever cookie it also carries
    with replicas.a.client(replicas.a.admin_key) as client:
        client.cookies.set("fathom_session", "stale")
        assert ok(client.get("/api/core/app/detail", params={"appId": app_id}))["name"] == "csrf"


def test_a_session_works_on_every_replica_and_sign_out_ends_it(replicas: Replicas) -> None:
    owner, token = sign_in(replicas.a, "root", replicas.root_password)
    with closing(owner), replicas.b.client() as other:
        other.cookies = owner.cookies
        assert ok(other.get("/api/v1/whoami"))["username"] == "root"
        assert ok(owner.post("/api/support/user/account/loginout", headers=csrf(token))) is None
        gone = other.get("/api/v1/whoami")
        assert gone.status_code == 401 and "sign in again" in gone.json()["message"]


def test_invitation_makes_a_member_who_signs_in_with_a_password(replicas: Replicas) -> None:
    link = invite(replicas, "member")
    with replicas.b.client() as visitor:
        info = ok(visitor.get("/api/support/user/team/invitation/info", params={"token": link}))
        assert info["role"] == "member" and info["teamName"] == "Default team"
        bad = visitor.post(ACCEPT, json={"token": link, "username": "x", "password": "longenough"})
        assert bad.status_code == 400 and bad.json()["message"].startswith("username:")
        short = visitor.post(ACCEPT, json={"token": link, "username": "ann", "password": "short"})
        assert short.status_code == 400 and short.json()["message"].startswith("password:")
        joined = visitor.post(ACCEPT, json={"token": link, "username": "Ann", "password": "ann's secret"})
        assert joined.status_code == 200, joined.text
        assert "HttpOnly" in joined.headers["set-cookie"]
        assert ok(visitor.get(WHO))["username"] == "ann"
        again = visitor.post(ACCEPT, json={"token": link, "username": "ann2", "password": "ann's secret"})
        assert again.status_code == 410 and "already used" in again.json()["message"]
    member, token = sign_in(replicas.a, "ann", "ann's secret")
    with closing(member):
        assert ok(member.get("/api/v1/whoami", headers=csrf(token)))["role"] == "member"
        dataset = ok(member.post("/api/core/dataset/create", json={"name": "Ann's"}, headers=csrf(token)))
        assert ok(member.get("/api/core/dataset/detail", params={"id": dataset}, headers=csrf(token)))
        refused = member.post(INVITE, json={"role": "member"}, headers=csrf(token))
        assert refused.status_code == 403 and refused.json()["statusText"] == "openapiUnAuth"
    owner, token = sign_in(replicas.a, "root", replicas.root_password)
    with closing(owner):
        listed = ok(owner.get("/api/support/user/team/member/list", headers=csrf(token)))
        assert {"username": "ann", "role": "member"}.items() <= next(
            m for m in listed if m["username"] == "ann"
        ).items()
        invitations = ok(owner.get("/api/support/user/team/invitation/list", headers=csrf(token)))
        assert all("token" not in i for i in invitations)
        used = [i for i in invitations if i["usedAt"]]
        assert used and used[0]["usedBy"]


def test_an_invitation_expires_and_a_taken_username_is_refused(replicas: Replicas) -> None:
    soon = invite(replicas, "member", hours=0.0002)  # under a second
    time.sleep(1.0)
    with replicas.a.client() as visitor:
        late = visitor.post(ACCEPT, json={"token": soon, "username": "late", "password": "late enough"})
        assert late.status_code == 410 and "expired" in late.json()["message"]
        link = invite(replicas, "member")
        taken = visitor.post(ACCEPT, json={"token": link, "username": "root", "password": "long enough"})
        assert taken.status_code == 409 and "username: 'root' is taken" in taken.json()["message"]
        # the refused attempt did not use the link up
        assert ok(visitor.get("/api/support/user/team/invitation/info", params={"token": link}))
        unknown = visitor.get("/api/support/user/team/invitation/info", params={"token": "nope"})
        assert unknown.status_code == 410
        hours = invite_status(replicas, {"role": "member", "expiresHours": -1})
        assert hours.status_code == 400 and hours.json()["message"].startswith("expiresHours:")
        role = invite_status(replicas, {"role": "boss"})
        assert role.status_code == 400 and role.json()["message"].startswith("role:")


def invite_status(replicas: Replicas, body: dict[str, object]) -> httpx.Response:
    owner, token = sign_in(replicas.a, "root", replicas.root_password)
    with closing(owner):
        return owner.post(INVITE, json=body, headers=csrf(token))


def test_an_admin_may_invite_admins_and_members_but_not_owners(replicas: Replicas) -> None:
    join(replicas, "ada", "ada's secret", role="admin")
    admin, token = sign_in(replicas.a, "ada", "ada's secret")
    with closing(admin):
        assert ok(admin.post(INVITE, json={"role": "admin"}, headers=csrf(token)))["role"] == "admin"
        owner = admin.post(INVITE, json={"role": "owner"}, headers=csrf(token))
        assert owner.status_code == 403 and "only an owner" in owner.json()["message"]


def test_changing_the_password_ends_the_other_sessions(replicas: Replicas) -> None:
    join(replicas, "bob", "bob's first")
    laptop, laptop_token = sign_in(replicas.a, "bob", "bob's first")
    phone, _ = sign_in(replicas.b, "bob", "bob's first")
    change = "/api/support/user/account/updatePasswordByOld"
    with closing(laptop), closing(phone):
        wrong = laptop.post(
            change, json={"oldPsw": "nope", "newPsw": "bob's second"}, headers=csrf(laptop_token)
        )
        assert wrong.status_code == 400 and wrong.json()["message"].startswith("oldPsw:")
        short = laptop.post(
            change, json={"oldPsw": "bob's first", "newPsw": "2short"}, headers=csrf(laptop_token)
        )
        assert short.status_code == 400 and short.json()["message"].startswith("newPsw:")
        in_url = laptop.post(change, params={"newPsw": "x"}, json={}, headers=csrf(laptop_token))
        assert in_url.status_code == 400 and "never in the URL" in in_url.json()["message"]
        ok(
            laptop.post(
                change, json={"oldPsw": "bob's first", "newPsw": "bob's second"}, headers=csrf(laptop_token)
            )
        )
        assert phone.get("/api/v1/whoami").status_code == 401
        assert ok(laptop.get("/api/v1/whoami"))["username"] == "bob"
    with replicas.a.client() as client:
        assert client.post(LOGIN, json={"username": "bob", "password": "bob's first"}).status_code == 401
    sign_in(replicas.a, "bob", "bob's second")[0].close()


def test_sign_in_is_rate_limited_per_username_across_replicas(replicas: Replicas) -> None:
    join(replicas, "carol", "carol's secret")
    servers = [replicas.a, replicas.b]
    for attempt in range(PER_USER):
        with servers[attempt % 2].client() as client:
            wrong = client.post(LOGIN, json={"username": "carol", "password": f"guess {attempt}"})
            assert wrong.status_code == 401 and wrong.json()["message"] == "Wrong username or password"
    for server in servers:  # even the right password, on either replica
        with server.client() as client:
            limited = client.post(LOGIN, json={"username": "carol", "password": "carol's secret"})
            assert limited.status_code == 429, limited.text
            assert limited.json()["statusText"] == "tooManyRequests"
            assert 0 < int(limited.headers["retry-after"]) <= 900
    sign_in(replicas.a, "root", replicas.root_password)[0].close()  # other names are not locked


def test_a_key_made_in_a_session_belongs_to_the_signed_in_member(replicas: Replicas) -> None:
    member_id = join(replicas, "dave", "dave's secret", role="admin")
    admin, token = sign_in(replicas.a, "dave", "dave's secret")
    with closing(admin):
        key = ok(admin.post("/api/support/openapi/create", json={"name": "dave's bot"}, headers=csrf(token)))
    with replicas.b.client(key) as program:
        who = ok(program.get("/api/v1/whoami"))
        assert who["tmbId"] == member_id and who["role"] == "admin"
        assert ok(program.get(WHO))["username"] == "dave"
        assert program.post("/api/support/user/account/loginout").status_code == 400


def test_an_admin_revokes_only_their_own_keys_and_an_owner_any(replicas: Replicas) -> None:
    join(replicas, "erin", "erin's secret", role="admin")
    owner, owner_csrf = sign_in(replicas.a, "root", replicas.root_password)
    admin, admin_csrf = sign_in(replicas.b, "erin", "erin's secret")
    with closing(owner), closing(admin):
        owners = ok(
            owner.post("/api/support/openapi/create", json={"name": "root's"}, headers=csrf(owner_csrf))
        )
        listed = ok(owner.get("/api/support/openapi/list", headers=csrf(owner_csrf)))
        owners_id = next(k["_id"] for k in listed if k["name"] == "root's")
        refused = admin.delete(
            "/api/support/openapi/delete", params={"id": owners_id}, headers=csrf(admin_csrf)
        )
        assert refused.status_code == 403, refused.text
        assert "only an owner or the key's maker" in refused.json()["message"]
        with replicas.a.client(owners) as still:
            assert still.get("/api/v1/whoami").status_code == 200
        for name in ("erin's first", "erin's second"):
            ok(admin.post("/api/support/openapi/create", json={"name": name}, headers=csrf(admin_csrf)))
        listed = ok(admin.get("/api/support/openapi/list", headers=csrf(admin_csrf)))
        mine = [k["_id"] for k in listed if k["name"].startswith("erin's")]
        ok(admin.delete("/api/support/openapi/delete", params={"id": mine[0]}, headers=csrf(admin_csrf)))
        ok(owner.delete("/api/support/openapi/delete", params={"id": mine[1]}, headers=csrf(owner_csrf)))
        ok(owner.delete("/api/support/openapi/delete", params={"id": owners_id}, headers=csrf(owner_csrf)))


def test_sign_in_is_rate_limited_per_client_address(replicas: Replicas) -> None:
    """Loopback is one address: PER_IP failures over many names lock every name from it (last in the
    module: it locks the address for the rest of the window)."""
    with replicas.a.client() as client:
        for attempt in range(PER_IP + 1):
            response = client.post(LOGIN, json={"username": f"nobody{attempt}", "password": "whatever1"})
            if response.status_code == 429:
                break
        assert response.status_code == 429 and "this address" in response.json()["message"]
        locked = client.post(LOGIN, json={"username": "root", "password": replicas.root_password})
        assert locked.status_code == 429
