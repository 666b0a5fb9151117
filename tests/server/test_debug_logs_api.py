"""With every logger at DEBUG (``FATHOM_LOG_LEVEL=debug``, as ``fathom serve`` configures it), signing
in, adding members, changing a password, joining by invitation and making and using an API key never put
a password, a password hash, a session or CSRF token, an invitation token, an API key or the hash of any
of them into a log record, on SQLite and PostgreSQL (issue 28 item 6). SQLAlchemy's statement log is on
too, as an operator chasing a query would turn it on: the statements are logged, never their parameters
(and aiosqlite's DEBUG lines, which print each call's arguments, are kept off)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Iterator
from contextlib import closing

import httpx
import pytest
from live_support import LiveServer, backend_settings, ok, start_live_server

from fathom.cli import _configure_logging

LOGIN = "/api/support/user/account/loginByPassword"


class Captured(logging.Handler):
    """Every record, as the text a handler would write (message, arguments, exception)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def logged(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, Captured]]:
    settings = backend_settings(request, tmp_path_factory, "logs", seed_demo=False, log_level="debug")
    logger = logging.getLogger()
    saved = (logger.handlers[:], logger.level)
    _configure_logging(settings)
    # SQLAlchemy keeps its own loggers at WARNING unless told; an operator chasing a query turns them on
    engine_logger = logging.getLogger("sqlalchemy.engine")
    engine_level = engine_logger.level
    engine_logger.setLevel(logging.INFO)
    captured = Captured()
    logger.addHandler(captured)
    try:
        yield from ((server, captured) for server in start_live_server(settings, log_level="debug"))
    finally:
        logger.handlers[:] = saved[0]
        logger.setLevel(saved[1])
        engine_logger.setLevel(engine_level)


def _sign_in(server: LiveServer, username: str, password: str) -> tuple[httpx.Client, str, str]:
    """A cookie client signed in: the client, its session token and its CSRF token."""
    client = httpx.Client(base_url=server.base_url, timeout=60)
    data = ok(client.post(LOGIN, json={"username": username, "password": password}))
    client.headers["X-CSRF-Token"] = data["csrfToken"]
    return client, client.cookies["fathom_session"], str(data["csrfToken"])


def test_debug_logs_never_carry_passwords_hashes_tokens_or_keys(logged: tuple[LiveServer, Captured]) -> None:
    server, captured = logged
    assert server.boot.root_password
    secrets = [server.boot.root_password, server.admin_key]
    owner, session, csrf = _sign_in(server, "root", server.boot.root_password)
    secrets += [session, csrf]
    with closing(owner):
        ok(
            owner.post(
                "/api/support/user/team/member/create", json={"username": "ada", "password": "ada's 1st"}
            )
        )
        key = str(ok(owner.post("/api/support/openapi/create", json={"name": "bot"})))
        invitation = ok(owner.post("/api/support/user/team/invitation/create", json={"role": "member"}))
    secrets += ["ada's 1st", key, invitation["token"]]
    with server.client(key) as bot:
        ok(bot.get("/api/v1/whoami"))
    ada, session, csrf = _sign_in(server, "ada", "ada's 1st")
    secrets += [session, csrf, "ada's 2nd"]
    with closing(ada):
        ok(
            ada.post(
                "/api/support/user/account/updatePasswordByOld",
                json={"oldPsw": "ada's 1st", "newPsw": "ada's 2nd"},
            )
        )
    with httpx.Client(base_url=server.base_url, timeout=60) as guest:
        assert guest.post(LOGIN, json={"username": "ada", "password": "a wrong guess"}).status_code == 401
        joined = guest.post(
            "/api/support/user/team/invitation/accept",
            json={"token": invitation["token"], "username": "bob", "password": "bo's secret"},
        )
        ok(joined)
        secrets += ["a wrong guess", "bo's secret", joined.cookies["fathom_session"]]

    async def stored_hashes() -> list[str]:
        store = server.platform.accounts.store
        users = [await store.user_by_username(name) for name in ("root", "ada", "bob")]
        return [user.password_hash for user in users if user is not None]

    hashes = asyncio.run(stored_hashes())
    assert len(hashes) == 3
    secrets += hashes + [hashlib.sha256(value.encode()).hexdigest() for value in secrets]

    text = "\n".join(captured.lines)
    assert "INSERT INTO users" in text or "INSERT INTO user" in text  # statements are logged ...
    leaked = [value for value in secrets if value in text]  # ... never their parameters
    assert not leaked, [next(line for line in captured.lines if value in line)[:300] for value in leaked]
