"""Several machines (DESIGN §1 step 6): two ``fathom serve`` replicas and two ``fathom worker``
processes against one real PostgreSQL and one real Redis, all on loopback. A knowledge base ingested
through replica A is claimed job by job by both workers with no chunk lost or duplicated; an app made
on A answers through B; a run streaming from B is stopped from a third connection; a client that
dropped B's stream resumes on A (``Last-Event-ID``) with nothing lost or repeated."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from cluster_support import (
    FathomProcess,
    fathom_env,
    free_port,
    printed_admin_key,
    redis_server,
    sse_frames,
    streamed_text,
    wait_healthy,
)

from fathom.config import Settings
from fathom.datasets.ingest import INGEST_JOB_KIND
from fathom.platform import Platform
from fathom.store.pg_embedded import EmbeddedPostgres
from fathom.testing import ScriptedOpenAIServer, text_turn

MODEL = "scripted-chat"
SECRET = "cluster-test-secret-key-0123456789"
COLLECTIONS = 6
PARAGRAPHS = 6


@dataclass
class Cluster:
    a: str
    b: str
    admin_key: str
    database_url: str
    workers: list[FathomProcess]
    model: ScriptedOpenAIServer
    data_dir: Path

    def client(self, base_url: str) -> httpx.Client:
        return httpx.Client(
            base_url=base_url, headers={"Authorization": f"Bearer {self.admin_key}"}, timeout=30
        )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, postgres_server: EmbeddedPostgres) -> Iterator[Cluster]:
    root = tmp_path_factory.mktemp("cluster")
    database_url = postgres_server.create_database(f"cluster_{free_port()}")
    with redis_server(root) as redis_url, ScriptedOpenAIServer() as model:

        def env(name: str, **extra: str) -> dict[str, str]:
            return fathom_env(
                data_dir=str(root / name),
                database_url=database_url,
                redis_url=redis_url,
                secret_key=SECRET,
                seed_demo="false",
                workers="0",
                openai_base_url=model.base_url,
                chat_model=MODEL,
                log_level="warning",
                **extra,
            )

        ports = {"a": free_port(), "b": free_port()}
        processes: list[FathomProcess] = []
        try:
            a = FathomProcess("serve-a", ["serve"], env("a", port=str(ports["a"])), root)
            processes.append(a)
            a.wait_for_line("Fathom ")
            admin_key = printed_admin_key(a)
            b = FathomProcess("serve-b", ["serve"], env("b", port=str(ports["b"])), root)
            workers = [FathomProcess(f"worker-{i}", ["worker"], env(f"w{i}"), root) for i in (1, 2)]
            processes += [b, *workers]
            for worker in workers:
                worker.wait_for_line("worker ")
            urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
            wait_healthy(urls["a"], a)
            wait_healthy(urls["b"], b)
            assert admin_key is not None and printed_admin_key(b) is None  # one root team for both
            yield Cluster(urls["a"], urls["b"], admin_key, database_url, workers, model, root)
        finally:
            for process in reversed(processes):
                process.stop()


def _text(paragraph: str) -> str:
    return f"{paragraph} " + "The replicas share one database and one Redis. " * 3


def _collection_text(index: int) -> str:
    return "\n\n".join(_text(f"Marker c{index}p{j}.") for j in range(PARAGRAPHS))


def _records(cluster: Cluster, base_url: str, app_id: str, chat_id: str) -> list[dict[str, Any]]:
    with cluster.client(base_url) as client:
        reply = client.post(
            "/api/core/chat/getPaginationRecords", json={"appId": app_id, "chatId": chat_id, "pageSize": 50}
        ).json()
    return list(reply["data"]["list"])


def _record_text(record: dict[str, Any]) -> str:
    return "".join((v.get("text") or {}).get("content") or "" for v in record["value"])


async def test_ingestion_through_a_is_claimed_once_per_job_by_both_workers(cluster: Cluster) -> None:
    with cluster.client(cluster.a) as client:
        dataset = client.post("/api/core/dataset/create", json={"name": "Replicated docs"}).json()["data"]
        ids = []
        for index in range(COLLECTIONS):
            body = {
                "datasetId": dataset,
                "name": f"part-{index}",
                "text": _collection_text(index),
                "chunkSettingMode": "custom",
                "chunkSize": 200,
            }
            reply = client.post("/api/core/dataset/collection/create/text", json=body).json()
            assert reply["code"] == 200, reply
            ids.append(reply["data"]["collectionId"])
    deadline = time.monotonic() + 60
    with cluster.client(cluster.b) as client:  # progress is read through the other replica
        while True:
            page = client.post(
                "/api/core/dataset/collection/listV2", json={"datasetId": dataset, "pageSize": 50}
            ).json()["data"]["list"]
            assert not [c for c in page if c["status"] == "error"], page
            if len(page) == COLLECTIONS and all(c["status"] == "ready" for c in page):
                break
            assert time.monotonic() < deadline, page
            await asyncio.sleep(0.3)
        for collection in page:
            rows = client.post(
                "/api/core/dataset/data/v2/list", json={"collectionId": collection["_id"], "pageSize": 100}
            ).json()["data"]
            index = int(collection["name"].split("-")[1])
            assert rows["total"] == len(rows["list"]) == collection["chunksTotal"] == collection["dataAmount"]
            assert sorted(r["chunkIndex"] for r in rows["list"]) == list(range(rows["total"]))  # no duplicate
            joined = "\n".join(r["q"] for r in rows["list"])
            for j in range(PARAGRAPHS):
                assert f"Marker c{index}p{j}." in joined  # nothing lost
    platform = Platform.build(
        Settings(database_url=cluster.database_url, data_dir=cluster.data_dir / "check", secret_key=SECRET)
    )
    try:
        jobs = await platform.jobs.list_jobs(kind=INGEST_JOB_KIND)
    finally:
        await platform.db.close()
    assert sorted(job.payload["collectionId"] for job in jobs) == sorted(ids)
    assert all(job.status == "done" and job.attempts == 1 for job in jobs), jobs
    runs = []
    for worker in cluster.workers:
        worker.stop()
        runs.append(int(worker.wait_for_line("ran ").split()[1]))
    assert sum(runs) == COLLECTIONS and all(runs), runs  # each job once, both workers took some


def _start_answer_app() -> dict[str, Any]:
    def io(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": value, "valueType": "any", "renderTypeList": ["input"], "label": key}

    return {
        "name": "Echo",
        "type": "advanced",
        "nodes": [
            {
                "nodeId": "start",
                "name": "start",
                "flowNodeType": "workflowStart",
                "inputs": [io("userChatInput", "")],
                "outputs": [
                    {"id": "userChatInput", "key": "userChatInput", "type": "static", "valueType": "string"}
                ],
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


def _create_published(cluster: Cluster, body: dict[str, Any]) -> str:
    with cluster.client(cluster.a) as client:
        reply = client.post("/api/core/app/create", json=body).json()
        assert reply["code"] == 200, reply
        published = client.post("/api/core/app/version/publish", json={"appId": reply["data"]}).json()
        assert published["code"] == 200, published
    return str(reply["data"])


def test_an_app_made_on_a_answers_through_b_and_is_stored_once(cluster: Cluster) -> None:
    app_id = _create_published(cluster, _start_answer_app())
    with cluster.client(cluster.b) as client:
        plain = client.post(
            "/api/v1/chat/completions",
            json={"appId": app_id, "chatId": "c-b", "messages": [{"role": "user", "content": "hello"}]},
        ).json()
        streamed = client.post(
            "/api/v1/chat/completions",
            json={
                "appId": app_id,
                "chatId": "c-b",
                "stream": True,
                "messages": [{"role": "user", "content": "again"}],
            },
        ).text
    assert plain["choices"][0]["message"]["content"].strip() == "You said: hello"
    frames = sse_frames(streamed)
    assert streamed_text(frames).strip() == "You said: again" and frames[-1][1] == "[DONE]"
    records = _records(cluster, cluster.a, app_id, "c-b")
    assert [(r["obj"], _record_text(r).strip()) for r in records] == [
        ("Human", "hello"),
        ("AI", "You said: hello"),
        ("Human", "again"),
        ("AI", "You said: again"),
    ]


def test_a_run_streaming_from_b_is_stopped_from_a_third_connection(cluster: Cluster) -> None:
    body = {"name": "Slow", "type": "simple", "simpleConfig": {"model": MODEL, "systemPrompt": "Be brief."}}
    app_id = _create_published(cluster, body)
    full = "z" * 400
    cluster.model.set_script([text_turn(full, text_chunk_chars=2, delay=0.02)])
    request = {
        "appId": app_id,
        "chatId": "c-stop",
        "stream": True,
        "detail": True,
        "messages": [{"role": "user", "content": "go"}],
    }
    result: dict[str, str] = {}

    def consume() -> None:
        with cluster.client(cluster.b) as client:
            result["body"] = client.post("/api/v2/chat/completions", json=request).text

    reader = threading.Thread(target=consume)
    reader.start()
    stopped = False
    with httpx.Client(
        base_url=cluster.a, headers={"Authorization": f"Bearer {cluster.admin_key}"}, timeout=10
    ) as third:
        deadline = time.monotonic() + 15
        while not stopped and time.monotonic() < deadline:
            reply = third.post("/api/v2/chat/stop", json={"appId": app_id, "chatId": "c-stop"}).json()
            stopped = bool(reply["data"]["success"])
            time.sleep(0.05)
    reader.join(timeout=30)
    assert stopped
    frames = sse_frames(result["body"])
    text = streamed_text(frames)
    assert frames[-1][1] == "[DONE]" and len(text) < len(full)
    records = _records(cluster, cluster.a, app_id, "c-stop")
    assert [r["obj"] for r in records] == ["Human", "AI"]  # one answer, stored once
    assert _record_text(records[1]) == text  # what the client saw is what was kept


def test_a_stream_dropped_on_b_resumes_on_a(cluster: Cluster) -> None:
    body = {
        "name": "Resumable",
        "type": "simple",
        "simpleConfig": {"model": MODEL, "systemPrompt": "Be brief."},
    }
    app_id = _create_published(cluster, body)
    full = "Streams survive a replica switch between processes."
    cluster.model.set_script([text_turn(full, text_chunk_chars=3, delay=0.03)])
    request = {
        "appId": app_id,
        "chatId": "c-resume",
        "stream": True,
        "detail": True,
        "messages": [{"role": "user", "content": "go"}],
    }
    blocks: list[str] = []
    with (
        cluster.client(cluster.b) as client,
        client.stream("POST", "/api/v2/chat/completions", json=request) as response,
    ):
        buffer = ""
        for chunk in response.iter_text():
            buffer += chunk
            while "\n\n" in buffer:
                block, buffer = buffer.split("\n\n", 1)
                blocks.append(block)
            if len(blocks) >= 4:
                break  # the client drops mid-answer
    last_id = next(line for line in reversed(blocks[-1].split("\n")) if line.startswith("id: "))[4:]
    with cluster.client(cluster.a) as client:
        rest = client.get(
            "/api/v2/chat/resume",
            params={"appId": app_id, "chatId": "c-resume"},
            headers={"Last-Event-ID": last_id},
        ).text
    first = sse_frames("\n\n".join(blocks) + "\n\n")
    frames = sse_frames(rest)
    assert frames[0][0] == "resumePhase" and frames[-1][0] == "resumeCompleted", rest[:500]
    assert streamed_text(first) + streamed_text(frames) == full  # nothing lost, nothing twice
    records = _records(cluster, cluster.a, app_id, "c-resume")
    assert [r["obj"] for r in records] == ["Human", "AI"] and _record_text(records[1]) == full
