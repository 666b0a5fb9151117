"""argon2id's cost is a setting (``FATHOM_PASSWORD_HASH_MEMORY_KIB`` / ``_PASSES``): the product's default is
RFC 9106's second recommendation (64 MiB, 3 passes, 4 lanes); a server hashes with the cost it is given,
and a password stored at another cost still signs in over HTTP and is hashed again at this server's cost
(so lowering or raising the cost reaches every user at their next sign-in). The suite itself runs at a
low cost (tests/conftest.py), which is why the default is asserted on the settings, not on a server."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest
from argon2 import PasswordHasher
from live_support import free_port, ok, start_live_server

from fathom.config import Settings
from fathom.security.accounts import password_hasher

LOGIN = "/api/support/user/account/loginByPassword"


def _stored_root_hash(data_dir: Path) -> str:
    with sqlite3.connect(data_dir / "fathom.db") as db:
        row = db.execute("SELECT password_hash FROM users WHERE username = 'root'").fetchone()
    return str(row[0])


def test_the_default_cost_is_rfc_9106s_second_recommendation() -> None:
    fields = Settings.model_fields
    assert fields["password_hash_memory_kib"].default == 65536
    assert fields["password_hash_passes"].default == 3
    hasher = password_hasher()
    reference = PasswordHasher()  # argon2-cffi's defaults: RFC 9106's second recommendation
    assert (hasher.memory_cost, hasher.time_cost, hasher.parallelism) == (65536, 3, 4)
    assert (hasher.memory_cost, hasher.time_cost, hasher.parallelism, hasher.type) == (
        reference.memory_cost,
        reference.time_cost,
        reference.parallelism,
        reference.type,
    )


@pytest.mark.parametrize(("memory_kib", "passes"), [(0, 3), (65536, 0), (63, 1)])
def test_a_cost_below_argon2s_minimum_is_refused_naming_the_setting(memory_kib: int, passes: int) -> None:
    with pytest.raises(ValueError, match="password_hash_(memory_kib|passes)"):
        Settings(password_hash_memory_kib=memory_kib, password_hash_passes=passes)


def test_a_password_stored_at_another_cost_signs_in_and_is_hashed_again_at_the_servers(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"

    def settings(memory_kib: int, passes: int) -> Settings:
        return Settings(
            data_dir=data_dir,
            port=free_port(),
            workers=0,
            root_password="correct horse battery",
            password_hash_memory_kib=memory_kib,
            password_hash_passes=passes,
        )

    for _ in start_live_server(settings(1024, 2)):
        pass  # the first start creates root at this cost
    first = _stored_root_hash(data_dir)
    assert first.startswith("$argon2id$v=19$m=1024,t=2,p=4$"), first

    for server in start_live_server(settings(512, 1), replica=True):  # the second start: no new admin key
        with server.client() as client:
            wrong = client.post(LOGIN, json={"username": "root", "password": "not the password"})
            assert wrong.status_code != 200
            assert _stored_root_hash(data_dir) == first  # a refused sign-in changes nothing
            signed_in = ok(client.post(LOGIN, json={"username": "root", "password": "correct horse battery"}))
            assert signed_in["csrfToken"]
        again = _stored_root_hash(data_dir)
        assert again.startswith("$argon2id$v=19$m=512,t=1,p=4$"), again
        with httpx.Client(base_url=server.base_url) as client:  # the new hash checks the same password
            ok(client.post(LOGIN, json={"username": "root", "password": "correct horse battery"}))
            assert (
                client.post(LOGIN, json={"username": "root", "password": "wrong horse battery"}).status_code
                != 200
            )
