"""A replica killed (SIGKILL) while it streams answers, under two ``fathom serve`` replicas on one
PostgreSQL and one Redis: every chat it was answering keeps the user's question and an answer that reads
``interrupted`` once the chat lease passes (the dead replica stops refreshing its heartbeat), on the
other replica; resuming such a chat on the other replica ends with a definite ``resumeUnavailable``
(reason ``interrupted``), never a silent close; and the chat goes on there with a new question."""

from __future__ import annotations

import json
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
from fathom.testing.scripted_openai import RecordedRequest

MODEL = "scripted-chat"
SECRET = "replica-killed-secret-key-0123456789"
LEASE_S = 3
STREAMS = 4
LONG = "k" * 1200  # 600 chunks, 30 ms apart: ~18 s, far longer than the test waits before the kill


def _reply(request: RecordedRequest) -> Any:
    last = request.json["messages"][-1]["content"]
    if isinstance(last, str) and last.startswith("again"):
        return text_turn("a short answer", text_chunk_chars=4)
    return text_turn(LONG, text_chunk_chars=2, delay=0.03)


def _records(client: httpx.Client, app_id: str, chat_id: str) -> list[dict[str, Any]]:
    reply = client.post(
        "/api/core/chat/getPaginationRecords", json={"appId": app_id, "chatId": chat_id, "pageSize": 50}
    ).json()
    return list(reply["data"]["list"])


def test_a_replica_killed_mid_stream_leaves_questions_and_interrupted_answers(
    tmp_path: Path, postgres_server: EmbeddedPostgres
) -> None:
    database_url = postgres_server.create_database(f"killed_{free_port()}")
    with redis_process(tmp_path) as redis, ScriptedOpenAIServer(_reply) as model:
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
                    chat_lease_seconds=str(LEASE_S),
                    log_level="warning",
                )
                processes[name] = FathomProcess(f"serve-{name}", ["serve"], env, tmp_path)
                processes[name].wait_for_line("Fathom ", timeout=90)
            a, b = (f"http://127.0.0.1:{ports[name]}" for name in ("a", "b"))
            wait_healthy(a, processes["a"])
            wait_healthy(b, processes["b"])
            key = printed_admin_key(processes["a"])
            assert key is not None
            headers = {"Authorization": f"Bearer {key}"}
            with httpx.Client(base_url=b, headers=headers, timeout=30) as client:
                body = {"name": "Long", "type": "simple", "simpleConfig": {"model": MODEL}}
                app_id = client.post("/api/core/app/create", json=body).json()["data"]
                published = client.post("/api/core/app/version/publish", json={"appId": app_id}).json()
                assert published["code"] == 200, published

            seen: dict[str, str] = {}
            started = threading.Barrier(STREAMS + 1)

            def stream(chat_id: str) -> None:
                request = {
                    "appId": app_id,
                    "chatId": chat_id,
                    "stream": True,
                    "detail": True,
                    "messages": [{"role": "user", "content": f"question {chat_id}"}],
                }
                text, waited = "", False
                try:
                    with (
                        httpx.Client(base_url=a, headers=headers, timeout=60) as client,
                        client.stream("POST", "/api/v2/chat/completions", json=request) as response,
                    ):
                        for chunk in response.iter_text():
                            text += chunk
                            if not waited and text.count("\n\n") >= 20:
                                waited = True
                                started.wait(timeout=30)
                except (httpx.HTTPError, threading.BrokenBarrierError):
                    pass  # the replica died under the stream
                seen[chat_id] = text

            chats = [f"c-killed-{i}" for i in range(STREAMS)]
            readers = [threading.Thread(target=stream, args=(chat,)) for chat in chats]
            for reader in readers:
                reader.start()
            try:
                started.wait(timeout=60)  # every stream has its first frames
            except threading.BrokenBarrierError:
                raise AssertionError(f"not every stream started: {seen}") from None
            processes["a"].process.kill()
            killed_at = time.monotonic()
            processes["a"].process.wait(timeout=10)
            for reader in readers:
                reader.join(timeout=30)
            assert all("[DONE]" not in seen[chat] for chat in chats)  # no client was told it finished

            with httpx.Client(base_url=b, headers=headers, timeout=30) as client:
                records = {chat: _records(client, app_id, chat) for chat in chats}
                for chat, items in records.items():  # stored when the runs started
                    assert [item["obj"] for item in items] == ["Human", "AI"], items
                    assert items[0]["value"][0]["text"]["content"] == f"question {chat}"
                interrupted_after = None
                deadline = time.monotonic() + 60
                while interrupted_after is None:
                    states = [_records(client, app_id, chat)[1].get("status") for chat in chats]
                    if states == ["interrupted"] * STREAMS:
                        interrupted_after = time.monotonic() - killed_at
                    else:
                        assert set(states) <= {"running", "interrupted"}, states
                        assert time.monotonic() < deadline, states
                        time.sleep(0.2)
                answer = _records(client, app_id, chats[0])[1]
                assert answer["interrupted"] is True and answer["dataId"]

                resumed_at = time.monotonic()
                for chat in chats:
                    resumed = client.get(
                        "/api/v2/chat/resume",
                        params={"appId": app_id, "chatId": chat},
                        headers={"Last-Event-ID": "0"},
                    ).text
                    frames = sse_frames(resumed)
                    assert frames[-1][0] == "resumeUnavailable", resumed[-500:]
                    assert json.loads(frames[-1][1])["reason"] == "interrupted"
                    # what the mirror kept of the dead run is replayed first: the start of the answer
                    assert LONG.startswith(streamed_text(frames))
                resume_s = (time.monotonic() - resumed_at) / STREAMS

                # the mirror gone too (expired, or Redis restarted): the stored answer's state answers
                keys = redis_client.Redis.from_url(redis.url, decode_responses=True)
                try:
                    keys.delete(*keys.keys("fathom:chat:frames:*"))
                finally:
                    keys.close()
                resumed = client.get(
                    "/api/v2/chat/resume",
                    params={"appId": app_id, "chatId": chats[1]},
                    headers={"Last-Event-ID": "0"},
                ).text
                stored_answer = _records(client, app_id, chats[1])[1]
                assert [(event, json.loads(data)) for event, data in sse_frames(resumed)] == [
                    (
                        "resumeUnavailable",
                        {"reason": "interrupted", "chatId": chats[1], "dataId": stored_answer["dataId"]},
                    )
                ]

                again = client.post(
                    "/api/v2/chat/completions",
                    json={
                        "appId": app_id,
                        "chatId": chats[0],
                        "messages": [{"role": "user", "content": "again"}],
                    },
                )
                assert again.status_code == 200, again.text
                assert again.json()["choices"][0]["message"]["content"] == "a short answer"
                after = _records(client, app_id, chats[0])
                assert [(i["obj"], i.get("status")) for i in after] == [
                    ("Human", None),
                    ("AI", "interrupted"),
                    ("Human", None),
                    ("AI", None),
                ]
            print(
                f"{STREAMS} streams on the killed replica: {STREAMS} questions kept, "
                f"interrupted {interrupted_after:.2f} s after the kill (lease {LEASE_S} s), "
                f"resume answered definitely in {resume_s:.2f} s on average"
            )
        finally:
            for process in processes.values():
                process.stop()
        log = processes["b"].log.read_text()
        assert "Task exception was never retrieved" not in log and "Traceback" not in log, log[-3000:]
