"""PostgreSQL unreachable under a running ``fathom serve`` (a relay in front of it is cut: connections
closed, new ones refused, as when the server stops): requests answer 503 with ``Retry-After`` and
FastGPT's error body, health says "database unavailable", and nothing a client receives names the
driver, the host or the port; once the database is back, the same requests succeed again."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from cluster_support import FathomProcess, TcpProxy, fathom_env, free_port, printed_admin_key, wait_healthy

from fathom.store.pg_embedded import EmbeddedPostgres

SECRET = "database-outage-secret-key-0123456789"
OUTAGE_S = 5.0


def _echo_app() -> dict[str, Any]:
    def io(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": value, "valueType": "any", "renderTypeList": ["input"], "label": key}

    start_output = {"id": "userChatInput", "key": "userChatInput", "type": "static", "valueType": "string"}
    return {
        "name": "Echo",
        "type": "advanced",
        "nodes": [
            {
                "nodeId": "start",
                "name": "start",
                "flowNodeType": "workflowStart",
                "inputs": [io("userChatInput", "")],
                "outputs": [start_output],
            },
            {
                "nodeId": "reply",
                "name": "reply",
                "flowNodeType": "answerNode",
                "inputs": [io("text", "You said: {{$start.userChatInput$}}")],
                "outputs": [],
            },
        ],
        "edges": [
            {
                "source": "start",
                "target": "reply",
                "sourceHandle": "start-source-right",
                "targetHandle": "reply-target-left",
            }
        ],
    }


def _leaks(text: str, pg_port: int, proxy_port: int) -> list[str]:
    lowered = text.lower()
    return [w for w in ("psycopg", "operationalerror", str(pg_port), str(proxy_port)) if w in lowered]


def test_a_database_outage_answers_503_and_no_driver_text(
    tmp_path: Path, postgres_server: EmbeddedPostgres
) -> None:
    database_url = postgres_server.create_database(f"outage_{free_port()}")
    proxy = TcpProxy(postgres_server.port)
    proxy.up()
    port = free_port()
    env = fathom_env(
        data_dir=str(tmp_path / "data"),
        database_url=database_url.replace(f":{postgres_server.port}/", f":{proxy.port}/"),
        secret_key=SECRET,
        port=str(port),
        workers="0",
        seed_demo="false",
        log_level="warning",
    )
    base = f"http://127.0.0.1:{port}"
    server = FathomProcess("serve", ["serve"], env, tmp_path)
    try:
        wait_healthy(base, server, timeout=90)
        server.wait_for_line("Fathom ")  # printed after the credentials
        key = printed_admin_key(server)
        assert key is not None
        client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)
        with client:
            app_id = client.post("/api/core/app/create", json=_echo_app()).json()["data"]
            published = client.post("/api/core/app/version/publish", json={"appId": app_id}).json()
            assert published["code"] == 200, published
            chat = {"appId": app_id, "chatId": "c-outage", "messages": [{"role": "user", "content": "hi"}]}
            assert client.post("/api/v1/chat/completions", json=chat).status_code == 200

            proxy.down()
            down_at = time.monotonic()
            health = httpx.get(f"{base}/api/health", timeout=30)
            assert health.status_code == 503
            assert health.json()["data"]["database"]["error"] == "database unavailable"
            assert _leaks(health.text, postgres_server.port, proxy.port) == []
            answers = []
            for path, body in (
                ("/api/v1/chat/completions", chat),
                ("/api/v1/chat/completions", {**chat, "stream": True}),
                ("/api/core/app/list", {}),
            ):
                reply = client.post(path, json=body)
                answers.append((path, reply.status_code))
                assert _leaks(reply.text, postgres_server.port, proxy.port) == [], reply.text
                if reply.status_code != 200:  # a stream already started says so in its frames instead
                    assert reply.status_code == 503, (path, reply.status_code, reply.text)
                    assert reply.headers["Retry-After"].isdigit()
                    assert reply.json()["code"] == 503 and reply.json()["message"].startswith("Database")
            assert any(status == 503 for _, status in answers), answers
            print(f"answers during the outage: {answers}")
            time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - down_at)))

            proxy.up()
            up_at = time.monotonic()
            deadline = time.monotonic() + 60
            while httpx.get(f"{base}/api/health", timeout=30).status_code != 200:
                assert time.monotonic() < deadline, "the server did not recover"
                time.sleep(0.1)
            print(f"healthy {time.monotonic() - up_at:.2f} s after a {up_at - down_at:.1f} s outage ended")
            again = client.post("/api/v1/chat/completions", json=chat)
            assert again.status_code == 200, again.text
        proxy.down()  # stopped while the database is away (usage counters may still be held behind)
        server.stop()
        assert "Application shutdown failed" not in server.log.read_text()
    finally:
        server.stop()
        proxy.down()
    log = server.log.read_text()
    assert "unhandled error" not in log and "Exception in ASGI application" not in log, log[-3000:]
