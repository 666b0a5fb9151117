"""Redis restarted under two ``fathom serve`` replicas (PostgreSQL, Redis, loopback): while it is down
health says so and the run goes on; once it is back, a stop sent to replica A stops the run streaming
from replica B (the subscriber subscribed again, the run's mirror wrote its keys again), a client resumes
that run on A from the rewritten mirror, and no mirror task died with an unretrieved exception."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import redis as redis_client
from cluster_support import (
    FathomProcess,
    fathom_env,
    free_port,
    printed_admin_key,
    redis_process,
    sse_frames,
    streamed_text,
    wait_healthy,
)

from fathom.store.pg_embedded import EmbeddedPostgres
from fathom.testing import ScriptedOpenAIServer, text_turn

MODEL = "scripted-chat"
SECRET = "redis-restart-secret-key-0123456789"
FULL = "z" * 1200  # 600 chunks, 30 ms apart: ~18 s, far longer than the outage and the stop


def _redis_state(base_url: str) -> str:
    reply = httpx.get(f"{base_url}/api/health", timeout=5).json()
    return str(reply["data"]["redis"]["status"])


def _wait_redis_state(base_url: str, state: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while _redis_state(base_url) != state:
        assert time.monotonic() < deadline, f"{base_url}: Redis never {state}"
        time.sleep(0.1)


def test_after_a_redis_restart_a_stop_on_a_stops_the_run_on_b(
    tmp_path: Path, postgres_server: EmbeddedPostgres
) -> None:
    database_url = postgres_server.create_database(f"redis_restart_{free_port()}")
    with redis_process(tmp_path) as redis, ScriptedOpenAIServer() as model:
        ports = {"a": free_port(), "b": free_port()}
        processes: dict[str, FathomProcess] = {}
        try:
            for name in ("a", "b"):
                env = fathom_env(
                    data_dir=str(tmp_path / name),
                    database_url=database_url,
                    redis_url=redis.url,
                    secret_key=SECRET,
                    port=str(ports[name]),
                    workers="0",
                    seed_demo="false",
                    openai_base_url=model.base_url,
                    chat_model=MODEL,
                    log_level="info",
                )
                processes[name] = FathomProcess(f"serve-{name}", ["serve"], env, tmp_path)
                processes[name].wait_for_line("Fathom ", timeout=90)
            a, b = (f"http://127.0.0.1:{ports[name]}" for name in ("a", "b"))
            wait_healthy(a, processes["a"])
            wait_healthy(b, processes["b"])
            key = printed_admin_key(processes["a"])
            assert key is not None
            headers = {"Authorization": f"Bearer {key}"}
            assert _redis_state(a) == "ok"

            with httpx.Client(base_url=a, headers=headers, timeout=30) as client:
                body = {"name": "Slow", "type": "simple", "simpleConfig": {"model": MODEL}}
                app_id = client.post("/api/core/app/create", json=body).json()["data"]
                published = client.post("/api/core/app/version/publish", json={"appId": app_id}).json()
                assert published["code"] == 200, published
            model.set_script([text_turn(FULL, text_chunk_chars=2, delay=0.03)])
            request = {
                "appId": app_id,
                "chatId": "c-redis",
                "stream": True,
                "detail": True,
                "messages": [{"role": "user", "content": "go"}],
            }
            result: dict[str, Any] = {}

            def consume() -> None:
                with httpx.Client(base_url=b, headers=headers, timeout=60) as client:
                    result["body"] = client.post("/api/v2/chat/completions", json=request).text

            reader = threading.Thread(target=consume)
            reader.start()
            time.sleep(1.0)  # the run streams on B, mirrored to Redis

            redis.stop()
            down_at = time.monotonic()
            _wait_redis_state(a, "unavailable")
            time.sleep(1.0)  # a blip: the run keeps streaming from B meanwhile
            assert reader.is_alive()
            redis.start()
            up_at = time.monotonic()
            print(f"Redis down {up_at - down_at:.1f} s")

            stopped_at = None
            with httpx.Client(base_url=a, headers=headers, timeout=10) as third:
                deadline = time.monotonic() + 20
                while stopped_at is None and time.monotonic() < deadline:
                    reply = third.post("/api/v2/chat/stop", json={"appId": app_id, "chatId": "c-redis"})
                    if reply.json()["data"]["success"]:
                        stopped_at = time.monotonic()
                    else:
                        time.sleep(0.1)
            reader.join(timeout=40)
            assert stopped_at is not None, "the stop never reached B"
            print(f"stop through A answered {stopped_at - up_at:.2f} s after Redis came back")
            frames = sse_frames(result["body"])
            text = streamed_text(frames)
            assert frames[-1][1] == "[DONE]" and len(text) < len(FULL)  # stopped, not run to the end

            with httpx.Client(base_url=a, headers=headers, timeout=30) as client:
                resumed = client.get(
                    "/api/v2/chat/resume",
                    params={"appId": app_id, "chatId": "c-redis"},
                    headers={"Last-Event-ID": "0"},
                ).text
            resumed_frames = sse_frames(resumed)
            assert resumed_frames[-1][0] == "resumeCompleted", resumed[-500:]
            assert streamed_text(resumed_frames) == text  # the whole run, written again after the restart
            keys = redis_client.Redis.from_url(redis.url, decode_responses=True)
            try:
                assert keys.keys("fathom:chat:running:*") == []  # cleaned when the run ended
                assert keys.keys("fathom:chat:stop:*") == []
            finally:
                keys.close()
        finally:
            for process in processes.values():
                process.stop()
        for process in processes.values():
            log = process.log.read_text()
            assert "Task exception was never retrieved" not in log, log[-3000:]
            assert "Traceback" not in log, log[-3000:]
