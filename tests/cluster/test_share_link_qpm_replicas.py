"""A share link's QPM holds across replicas: two ``fathom serve`` processes on one PostgreSQL (no Redis),
a visitor's requests alternating between them. The count lives in the database, so the visitor's third
request of the minute is refused whichever replica it reaches, and another visitor is not."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from cluster_support import FathomProcess, fathom_env, free_port, printed_admin_key, wait_healthy

from fathom.store.pg_embedded import EmbeddedPostgres
from fathom.testing import ScriptedOpenAIServer, text_turn

MODEL = "scripted-chat"
SECRET = "share-link-replicas-secret-0123456789"


@dataclass
class Replicas:
    a: str
    b: str
    admin_key: str


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: EmbeddedPostgres
) -> Iterator[Replicas]:
    root = tmp_path_factory.mktemp("share-replicas")
    database_url = postgres_server.create_database(f"share_replicas_{free_port()}")
    with ScriptedOpenAIServer() as model:
        model.set_script(lambda request: text_turn("Within five working days."))

        def env(name: str, port: int) -> dict[str, str]:
            return fathom_env(
                data_dir=str(root / name),
                database_url=database_url,
                secret_key=SECRET,
                seed_demo="false",
                workers="0",
                openai_base_url=model.base_url,
                chat_model=MODEL,
                log_level="warning",
                port=str(port),
            )

        ports = {"a": free_port(), "b": free_port()}
        processes: list[FathomProcess] = []
        try:
            a = FathomProcess("serve-a", ["serve"], env("a", ports["a"]), root)
            processes.append(a)
            a.wait_for_line("Fathom ", timeout=180)
            admin_key = printed_admin_key(a)
            assert admin_key is not None
            b = FathomProcess("serve-b", ["serve"], env("b", ports["b"]), root)
            processes.append(b)
            b.wait_for_line("Fathom ", timeout=180)  # a shared machine can be slow to start two
            urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
            wait_healthy(urls["a"], a, timeout=180)
            wait_healthy(urls["b"], b, timeout=180)
            yield Replicas(urls["a"], urls["b"], admin_key)
        finally:
            for process in reversed(processes):
                process.stop()


def _chat(base_url: str, share_id: str, uid: str) -> httpx.Response:
    body = {"shareId": share_id, "outLinkUid": uid, "messages": [{"role": "user", "content": "Refunds?"}]}
    return httpx.post(f"{base_url}/api/v1/chat/completions", json=body, timeout=30)


def test_a_visitors_qpm_holds_across_two_replicas(replicas: Replicas) -> None:
    headers = {"Authorization": f"Bearer {replicas.admin_key}"}
    with httpx.Client(base_url=replicas.a, headers=headers, timeout=30) as owner:
        app = {"name": "Help desk", "type": "simple", "simpleConfig": {"model": MODEL}}
        app_id = owner.post("/api/core/app/create", json=app).json()["data"]
        link = {"appId": app_id, "name": "Website", "limit": {"QPM": 2}}
        share_id = owner.post("/api/support/outLink/create", json=link).json()["data"]

    first = _chat(replicas.a, share_id, "visitor-1")
    second = _chat(replicas.b, share_id, "visitor-1")
    assert (first.status_code, second.status_code) == (200, 200), (first.text, second.text)
    for base_url in (replicas.a, replicas.b):  # the third and fourth request, on either replica
        refused = _chat(base_url, share_id, "visitor-1")
        assert refused.status_code == 429, refused.text
        assert refused.json()["statusText"] == "outLinkOverFrequency"
    assert _chat(replicas.b, share_id, "visitor-2").status_code == 200  # the limit is per visitor
