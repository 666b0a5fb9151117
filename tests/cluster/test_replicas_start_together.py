"""Two ``fathom serve`` replicas started at the same moment on one empty PostgreSQL database (a
scale-out's first start; a rolling upgrade that ships a migration): both come up healthy, the schema is
migrated once, and exactly one of them creates and prints the admin key, which works on both."""

from __future__ import annotations

from pathlib import Path

import httpx
from cluster_support import FathomProcess, fathom_env, free_port, printed_admin_key, wait_healthy

from fathom.store.pg_embedded import EmbeddedPostgres

SECRET = "start-together-secret-key-0123456789"


def test_two_replicas_started_together_on_an_empty_database_both_come_up(
    tmp_path: Path, postgres_server: EmbeddedPostgres
) -> None:
    database_url = postgres_server.create_database(f"together_{free_port()}")
    ports = [free_port(), free_port()]
    processes = []
    try:
        for index, port in enumerate(ports):
            env = fathom_env(
                data_dir=str(tmp_path / f"r{index}"),
                database_url=database_url,
                secret_key=SECRET,
                port=str(port),
                workers="0",
                seed_demo="false",
                log_level="warning",
            )
            processes.append(FathomProcess(f"serve-{index}", ["serve"], env, tmp_path))
        for process, port in zip(processes, ports, strict=True):
            wait_healthy(f"http://127.0.0.1:{port}", process, timeout=90)
            process.wait_for_line("Fathom ")  # printed after the credentials
        keys = [key for key in map(printed_admin_key, processes) if key is not None]
        assert len(keys) == 1, [p.lines for p in processes]  # printed by the one that created it
        admin_key = keys[0]
        for port in ports:
            reply = httpx.get(
                f"http://127.0.0.1:{port}/api/v1/whoami",
                headers={"Authorization": f"Bearer {admin_key}"},
                timeout=10,
            )
            assert reply.status_code == 200 and reply.json()["data"]["role"] == "owner"
    finally:
        for process in processes:
            process.stop()
