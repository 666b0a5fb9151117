"""A real Fathom server on a loopback port, in a background thread (imported by conftest and by tests that
need a server with their own settings)."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
import uvicorn

from fathom.config import Settings
from fathom.platform import Bootstrap, Platform
from fathom.server.app import create_app, server_config
from migrated_databases import migrated_postgres_database, sqlite_migrated_ahead
from run_apart import run_apart

if TYPE_CHECKING:
    import pytest

    from fathom.store.pg_embedded import EmbeddedPostgres


@dataclass
class LiveServer:
    base_url: str
    platform: Platform
    boot: Bootstrap
    admin_key: str

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        # generous: the first /openapi.json builds the whole document (seconds of CPU on a busy machine)
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=60)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def backend_database_url(request: pytest.FixtureRequest, name: str) -> str | None:
    """The ``database_url`` of a server on the backend a fixture parametrized over ``["sqlite", "postgres"]``
    is at (``request.param``): None for "sqlite" (Settings then uses the file ``fathom.db`` in its data
    folder), for "postgres" the URL of a fresh database ``<name>_<pid>_<free port>`` (unique per process:
    each pytest-xdist worker has its own) on the session's embedded PostgreSQL: the ``postgres_server``
    fixture of ``tests/conftest.py``, which skips with its reason where PostgreSQL cannot be had."""
    if request.param != "postgres":
        return None
    postgres: EmbeddedPostgres = request.getfixturevalue("postgres_server")
    return migrated_postgres_database(postgres, f"{name}_{os.getpid()}_{free_port()}")


def backend_settings(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, name: str, **fields: Any
) -> Settings:
    """Settings of a module's server on the backend ``request.param`` names: a fresh data folder
    ``<name>-<backend>``, its database (``backend_database_url``), a free port, no ingestion workers;
    ``fields`` set the rest (the scripted model's URL, ``workers`` …)."""
    root = tmp_path_factory.mktemp(f"{name}-{request.param}")
    values: dict[str, Any] = {
        "data_dir": root / "data",
        "database_url": backend_database_url(request, name),
        "port": free_port(),
        "workers": 0,
    }
    return Settings(**{**values, **fields})


def start_live_server(
    settings: Settings, *, replica: bool = False, log_level: str = "warning"
) -> Iterator[LiveServer]:
    """A server on ``settings.port``; with ``replica``, one more server on a database another has
    already prepared (its admin key is then the empty string). ``log_level``: uvicorn's loggers'."""
    sqlite_migrated_ahead(settings)
    platform = Platform.build(settings)

    async def prepare() -> Bootstrap:
        try:
            return await platform.prepare()
        finally:
            await platform.db.close()

    boot = run_apart(prepare())  # this thread may run a loop (a console test's Chromium)
    assert replica or boot.admin_key is not None
    config = server_config(create_app(platform), "127.0.0.1", settings.port, log_level=log_level)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.02)
    try:
        yield LiveServer(f"http://127.0.0.1:{settings.port}", platform, boot, boot.admin_key or "")
    finally:
        server.should_exit = True
        thread.join(timeout=10)


FAQ = "\n\n".join(
    f"## {title}\n\n{body}"
    for title, body in [
        ("Refunds", "Refunds are paid back to the original card within five working days."),
        ("Shipping", "Parcels ship from Rotterdam and arrive within three days in the EU."),
        ("Warranty", "Every device carries a two year warranty against manufacturing faults."),
    ]
)


def ok(response: httpx.Response) -> Any:
    """The ``data`` of a 200 FastGPT envelope (fails the test otherwise, showing the body)."""
    assert response.status_code == 200, response.text
    return response.json()["data"]


def create_text_dataset(client: httpx.Client, text: str = FAQ, name: str = "KB") -> str:
    """A knowledge base holding ``text`` as one text collection, once its ingestion is done: its id."""
    dataset_id = str(ok(client.post("/api/core/dataset/create", json={"name": name})))
    collection_id = ok(
        client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": dataset_id, "name": "faq", "text": text},
        )
    )["collectionId"]
    deadline = time.monotonic() + 60
    while True:
        listing = ok(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
        item = next(i for i in listing["list"] if i["_id"] == collection_id)
        if item["trainingAmount"] == 0 or item["hasError"]:
            return dataset_id
        assert time.monotonic() < deadline, item
        time.sleep(0.2)
