"""The first ``fathom serve`` on an empty data dir seeds the demo knowledge base (the project's own
``docs/*.md``, ingested by the in-process workers with the local embedding model) and a published
demo app that answers with quoted chunks and no model configured; an app that needs a model answers
with an error naming the settings to set."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from fathom.demo import (
    DEMO_APP_NAME,
    DEMO_DATASET_NAME,
    INTRO_TEXT,
    NOT_IN_DEMO,
    docs_dir,
    load_docs,
    seed_demo,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"


@dataclass
class Served:
    base_url: str
    admin_key: str
    demo_app_id: str
    stdout: list[str]

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.base_url, headers={"Authorization": f"Bearer {self.admin_key}"}, timeout=30
        )

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=f"{self.base_url}/api/v1", api_key=self.admin_key, max_retries=0)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _clean_env(data_dir: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FATHOM_")}
    env.update({"FATHOM_DATA_DIR": str(data_dir), "FATHOM_PORT": str(port), "FATHOM_WORKERS": "2"})
    return env


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("first-start")
    port = _free_port()
    log = (root / "stderr.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "fathom", "serve"],
        env=_clean_env(root / "data", port),
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Fathom "):
                break
        assert lines and lines[-1].startswith("Fathom "), (lines, (root / "stderr.log").read_text())
        # the first start's box (fathom.cli.start_banner) holds the admin key: the one word "fathom-…"
        key = next(word for x in lines for word in x.replace("│", " ").split() if word.startswith("fathom-"))
        rows = [x.replace("│", " ").strip() for x in lines]
        app_id = next(x for x in rows if x.startswith("Demo app")).rsplit(" ", 1)[-1]
        base_url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base_url}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline and process.poll() is None, (root / "stderr.log").read_text()
            time.sleep(0.1)
        yield Served(base_url, key, app_id, lines)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _demo_collections(served: Served) -> list[dict[str, Any]]:
    with served.client() as client:
        datasets = client.post("/api/core/dataset/list", json={}).json()["data"]
        (demo,) = [d for d in datasets if d["name"] == DEMO_DATASET_NAME]
        page = client.post(
            "/api/core/dataset/collection/listV2", json={"datasetId": demo["_id"], "pageSize": 100}
        ).json()["data"]
    return list(page["list"])


def _wait_for_ready(served: Served, timeout: float = 90) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        collections = _demo_collections(served)
        ready = [c for c in collections if c["status"] == "ready"]
        assert not [c for c in collections if c["status"] == "error"], collections
        if ready:
            return ready
        assert time.monotonic() < deadline, collections
        time.sleep(0.5)


def test_docs_folder_is_found_from_the_installed_package() -> None:
    assert docs_dir() == DOCS


def test_first_start_prints_the_admin_key_and_the_demo_app_id(served: Served) -> None:
    with served.client() as client:
        assert client.get("/api/v1/whoami").json()["data"]["role"] == "owner"
        detail = client.get("/api/core/app/detail", params={"appId": served.demo_app_id}).json()
    assert detail["data"]["name"] == DEMO_APP_NAME, detail


def test_demo_knowledge_base_queues_one_collection_per_docs_file(served: Served) -> None:
    names = sorted(c["name"] for c in _demo_collections(served))
    guides = [p for p in DOCS.glob("*.md") if p.name not in NOT_IN_DEMO]
    assert names == sorted(p.name for p in guides if p.read_text().strip())


def test_demo_app_quotes_chunks_with_no_model_through_the_openai_client(served: Served) -> None:
    _wait_for_ready(served)
    question = "What does FATHOM_DATABASE_URL configure?"
    reply = served.openai().chat.completions.create(
        model="", messages=[{"role": "user", "content": question}], extra_body={"appId": served.demo_app_id}
    )
    content = reply.choices[0].message.content or ""
    assert INTRO_TEXT in content
    passages = content.split(INTRO_TEXT, 1)[1]
    assert '"sourceName"' not in passages and '"q":' not in passages, content  # no JSON dump
    assert len(content) < 6000, len(content)
    blocks = re.findall(r"\*\*\[(\d+)\] ([^*\n]+)\*\*\n\n((?:>.*\n?)+)", passages)
    assert blocks and [int(b[0]) for b in blocks] == list(range(1, len(blocks) + 1)), content
    for _, source, quoted in blocks:  # each passage is lines of the docs file it names
        lines = [line.removeprefix(">").strip().strip("*") for line in quoted.splitlines()]
        longest = max((line for line in lines if not line.endswith("…")), key=len)
        assert longest in (DOCS / source).read_text(), (source, quoted)
    stream = served.openai().chat.completions.create(
        model="",
        messages=[{"role": "user", "content": question}],
        stream=True,
        extra_body={"appId": served.demo_app_id},
    )
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert INTRO_TEXT in streamed and "**[1] " in streamed


def test_an_app_that_needs_a_model_names_the_settings_to_set(served: Served) -> None:
    body = {"name": "Needs a model", "type": "simple", "simpleConfig": {"systemPrompt": "Be brief."}}
    with served.client() as client:
        app_id = client.post("/api/core/app/create", json=body).json()["data"]
        client.post("/api/core/app/version/publish", json={"appId": app_id}).raise_for_status()
    messages: Any = [{"role": "user", "content": "hi"}]
    reply = served.openai().chat.completions.create(model="", messages=messages, extra_body={"appId": app_id})
    error = (reply.model_extra or {}).get("error")
    assert isinstance(error, str), reply
    assert "FATHOM_OPENAI_BASE_URL" in error and "FATHOM_MODELS_FILE" in error
    assert "Traceback" not in error
    body = {"appId": app_id, "stream": True, "messages": messages}
    with served.client() as client:
        text = client.post("/api/v1/chat/completions", json=body).text
    frames = [block.split("\n") for block in text.strip().split("\n\n")]
    errors = [json.loads(lines[-1][len("data: ") :]) for lines in frames if "event: error" in lines]
    assert len(errors) == 1, text
    assert "FATHOM_OPENAI_BASE_URL" in errors[0]["message"] and "FATHOM_MODELS_FILE" in errors[0]["message"]


async def test_without_a_docs_folder_only_the_app_is_seeded(tmp_path: Path) -> None:
    from fathom.config import Settings
    from fathom.platform import Platform

    platform = Platform.build(Settings(data_dir=tmp_path / "data", workers=0))
    try:
        boot = await platform.prepare()
        seed = await seed_demo(platform, boot.team_id, boot.member_id, load_docs(None))
        assert seed.dataset_id is None and seed.documents == 0
        assert await platform.datasets.list_datasets(boot.team_id) == []
        assert [v.version_name for v in await platform.apps.list_versions(boot.team_id, seed.app_id)] == [
            "demo"
        ]
        assert await platform.jobs.list_jobs(kind="dataset.ingest") == []
    finally:
        await platform.close()


def test_load_docs_reads_every_non_empty_markdown_file(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext")
    (tmp_path / "empty.md").write_text("  \n")
    (tmp_path / "notes.txt").write_text("not markdown")
    assert load_docs(tmp_path) == [("a.md", "# A\n\ntext")]


def test_the_demo_indexes_the_guides_not_the_benchmark_notebook_or_the_generated_examples() -> None:
    names = [name for name, _ in load_docs(DOCS)]
    assert "benchmarks.md" not in names and "api-examples.md" not in names
    assert {"api.md", "configuration.md", "knowledge.md", "workflows.md"} <= set(names)
    assert len(names) == len(list(DOCS.glob("*.md"))) - len(NOT_IN_DEMO)


async def test_only_the_first_start_seeds_the_demo(tmp_path: Path) -> None:
    from fathom.config import Settings
    from fathom.platform import Platform

    settings = Settings(data_dir=tmp_path / "data", workers=0)
    platform = Platform.build(settings)
    try:
        first = await platform.prepare(seed_demo=True)
        second = await platform.prepare(seed_demo=True)
        assert first.demo_app_id is not None and second.demo_app_id is None
        assert [a.id for a in await platform.apps.list_apps(first.team_id)] == [first.demo_app_id]
        assert len(await platform.datasets.list_datasets(first.team_id)) == 1
        jobs = await platform.jobs.list_jobs(kind="dataset.ingest")
        assert len(jobs) == len(load_docs(DOCS))
    finally:
        await platform.close()
