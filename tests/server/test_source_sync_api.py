"""Issue 34 through the HTTP API: knowledge that stays current. A website dataset crawled within its site
(prefix, depth, robots.txt, a redirect, the content selector), FastGPT's API file library (list, import,
content or preview URL), and re-sync by content hash: unchanged pages and files cost no embedding, a
changed one is re-embedded alone and replaces its old chunks, a deleted one loses its chunks, a failure
keeps the previous version searchable and is reported. SSRF vectors through each new fetch path are
refused by the egress guard. Sources and the embedding model are real loopback servers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_support import LiveServer, backend_database_url, free_port, ok, start_live_server

from fathom.config import Settings
from fathom.testing.fake_vectors import hash_embedding
from fathom.testing.scripted_openai import ScriptedOpenAIServer
from loopback_servers import serve_on_loopback
from source_servers import TOKEN, Library, Site, page

VECTORS_FILE = Path(__file__).parents[2] / ".." / "shared" / "datasets" / "ssrf-vectors" / "vectors.jsonl"


def _embed(text: str, dim: int) -> list[float]:
    if "POISON" in text:
        raise RuntimeError("the embedding server fails on this text")
    return hash_embedding(text, dim)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with serve_on_loopback(Site) as url:
        yield url


@pytest.fixture(scope="module")
def library() -> Iterator[str]:
    with serve_on_loopback(Library) as url:
        yield url


# FastGPT's API file library routes (issue 30: ``collection/create/apiCollection``) run on both backends
# (``@EACH_BACKEND``); the crawler, SSRF and settings tests, about fetching, on SQLite only.
EACH_BACKEND = pytest.mark.parametrize("world", ["sqlite", "postgres"], indirect=True)


@pytest.fixture(scope="module", params=["sqlite"])
def world(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[LiveServer, ScriptedOpenAIServer]]:
    database_url = backend_database_url(request, "source_sync")
    with ScriptedOpenAIServer(embed_fn=_embed) as scripted:
        root = tmp_path_factory.mktemp(f"sync_{request.param}")
        models = root / "models.yaml"
        models.write_text(
            "default_embedding: scripted-embedding\n"
            "models:\n"
            f"  - {{id: scripted-embedding, type: embedding, base_url: '{scripted.base_url}', "
            "max_retries: 0, dimensions: 256}\n",
            encoding="utf-8",
        )
        settings = Settings(
            data_dir=root / "data",
            port=free_port(),
            workers=1,
            models_file=models,
            egress_allow_cidrs=["127.0.0.1/32"],
            job_retry_delay_seconds=0,
            database_url=database_url,
        )
        for server in start_live_server(settings):
            yield server, scripted


@pytest.fixture
def client(world: tuple[LiveServer, ScriptedOpenAIServer]) -> Iterator[httpx.Client]:
    server, _ = world
    with server.client(server.admin_key) as http:
        yield http


def _runs(client: httpx.Client, dataset_id: str, **extra: Any) -> list[dict[str, Any]]:
    return list(ok(client.post("/api/core/dataset/syncHistory", json={"datasetId": dataset_id, **extra})))


def _settled_run(client: httpx.Client, dataset_id: str, count: int = 1, **extra: Any) -> dict[str, Any]:
    """The newest sync run once ``count`` runs exist and none is queued or running."""
    deadline = time.monotonic() + 60
    while True:
        runs = _runs(client, dataset_id, **extra)
        if len(runs) >= count and all(run["status"] in ("done", "failed") for run in runs):
            return runs[0]
        assert time.monotonic() < deadline, runs
        time.sleep(0.1)


def _collections(client: httpx.Client, dataset_id: str) -> dict[str, dict[str, Any]]:
    listing = ok(
        client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id, "pageSize": 30})
    )
    return {item["rawLink"] or item["name"]: item for item in listing["list"]}


def _texts(client: httpx.Client, collection_id: str) -> list[str]:
    rows = ok(
        client.post("/api/core/dataset/data/v2/list", json={"collectionId": collection_id, "pageSize": 30})
    )
    return [row["q"] for row in rows["list"]]


def _embedded_since(scripted: ScriptedOpenAIServer, before: int) -> list[str]:
    bodies = scripted.embedding_requests[before:]
    return [
        text
        for body in bodies
        for text in ([body["input"]] if isinstance(body["input"], str) else body["input"])
    ]


def _website(client: httpx.Client, url: str, **config: Any) -> str:
    body = {"name": "Docs site", "type": "websiteDataset", "websiteConfig": {"url": url, **config}}
    return str(ok(client.post("/api/core/dataset/create", json=body)))


def _guide_site() -> None:
    Site.hits.clear()
    Site.robots = "User-agent: *\nDisallow: /guide/secret\n"
    Site.pages = {
        "/guide/": page(
            "Guide",
            "The guide starts here and explains the product.",
            ("a", "/guide/b", "/guide/moved", "/guide/secret", "/outside", "http://other.example/x", "#top"),
        ),
        "/guide/a": page("Alpha", "Alpha pages describe the first steps of installing.", ("/guide/",)),
        "/guide/b": page("Beta", "Beta pages describe the backup schedule of the server.", ("/guide/deep1",)),
        "/guide/moved": ("redirect", "/guide/c"),
        "/guide/c": page("Gamma", "Gamma pages describe the cooling of the machines."),
        "/guide/secret": page("Secret", "Robots keep this page out."),
        "/guide/deep1": page("Deep one", "Deep pages are two links away.", ("/guide/deep2",)),
        "/guide/deep2": page("Deep two", "Too deep for the crawl."),
        "/outside": page("Outside", "Outside the prefix."),
    }


def test_website_sync_crawls_its_own_site_within_prefix_depth_and_robots(
    client: httpx.Client, site: str
) -> None:
    _guide_site()
    dataset_id = _website(client, f"{site}/guide/", selector=".doc", prefix="/guide/", maxDepth=2)
    run = _settled_run(client, dataset_id)
    assert run["status"] == "done" and run["trigger"] == "create", run
    collections = _collections(client, dataset_id)
    assert sorted(collections) == sorted(
        f"{site}{path}" for path in ("/guide/", "/guide/a", "/guide/b", "/guide/c", "/guide/deep1")
    )
    assert (run["seen"], run["added"], run["failed"]) == (5, 5, 0), run
    assert Site.hits["/guide/secret"] == 0 and Site.hits["/outside"] == 0 and Site.hits["/guide/deep2"] == 0
    assert Site.hits["/robots.txt"] == 1
    gamma = collections[f"{site}/guide/c"]  # reached through the redirect, known by where it ends
    assert gamma["name"] == "Gamma" and gamma["type"] == "link" and gamma["status"] == "ready"
    text = " ".join(_texts(client, gamma["_id"]))
    assert "cooling" in text and "NAVIGATION" not in text and "FOOTER" not in text  # the selector applied
    detail = ok(client.get("/api/core/dataset/detail", params={"id": dataset_id}))
    assert detail["type"] == "websiteDataset" and detail["websiteConfig"]["selector"] == ".doc"


def test_resync_reembeds_only_the_changed_page_and_removes_a_deleted_one(
    world: tuple[LiveServer, ScriptedOpenAIServer], client: httpx.Client, site: str
) -> None:
    _, scripted = world
    _guide_site()
    dataset_id = _website(client, f"{site}/guide/", selector=".doc", prefix="/guide/", maxDepth=1)
    _settled_run(client, dataset_id)
    before = _collections(client, dataset_id)
    kept_rows = _texts(client, before[f"{site}/guide/c"]["_id"])

    Site.pages["/guide/b"] = page("Beta", "Beta pages now describe the restore drill every Friday.")
    del Site.pages["/guide/a"]
    embedded = len(scripted.embedding_requests)
    queued = ok(client.post("/api/core/dataset/sync", json={"datasetId": dataset_id}))
    assert queued["status"] == "queued" and queued["trigger"] == "manual"
    run = _settled_run(client, dataset_id, count=2)
    assert run["status"] == "done", run
    assert (run["seen"], run["changed"], run["unchanged"], run["deleted"], run["added"]) == (3, 1, 2, 1, 0), (
        run
    )
    texts = _embedded_since(scripted, embedded)
    assert texts and all("restore drill" in text for text in texts)  # only the changed page was embedded
    after = _collections(client, dataset_id)
    assert f"{site}/guide/a" not in after
    assert "restore drill" in " ".join(_texts(client, after[f"{site}/guide/b"]["_id"]))
    assert after[f"{site}/guide/b"]["_id"] == before[f"{site}/guide/b"]["_id"]
    assert _texts(client, after[f"{site}/guide/c"]["_id"]) == kept_rows
    hits = ok(
        client.post(
            "/api/core/dataset/searchTest", json={"datasetId": dataset_id, "text": "first steps installing"}
        )
    )
    assert all("Alpha" not in item["q"] for item in hits["list"])


def test_a_failed_page_keeps_its_previous_version_searchable_and_is_reported(
    client: httpx.Client, site: str
) -> None:
    _guide_site()
    dataset_id = _website(client, f"{site}/guide/", selector=".doc", prefix="/guide/", maxDepth=1)
    _settled_run(client, dataset_id)
    beta = _collections(client, dataset_id)[f"{site}/guide/b"]
    old = _texts(client, beta["_id"])
    Site.pages["/guide/b"] = page("Beta", "POISON text the embedding server refuses.")
    Site.pages["/guide/c"] = ("redirect", "http://169.254.169.254/latest/meta-data/")
    ok(client.post("/api/core/dataset/sync", json={"datasetId": dataset_id}))
    run = _settled_run(client, dataset_id, count=2)
    assert run["status"] == "done" and run["failed"] == 2, run
    failed = {failure["source"]: failure["error"] for failure in run["failures"]}
    assert f"{site}/guide/b" in failed
    assert "private network" in failed[f"{site}/guide/moved"]
    collections = _collections(client, dataset_id)
    assert _texts(client, collections[f"{site}/guide/b"]["_id"]) == old  # the previous version stays
    assert f"{site}/guide/c" in collections  # not deleted: the crawl could not read it


def _library_dataset(client: httpx.Client, base_url: str, **extra: Any) -> str:
    body = {
        "name": "Files",
        "type": "apiDataset",
        "apiServer": {"baseUrl": base_url, "authorization": TOKEN},
        **extra,
    }
    return str(ok(client.post("/api/core/dataset/create", json=body)))


def _wait_ready(client: httpx.Client, collection_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        item = ok(client.get("/api/core/dataset/collection/detail", params={"id": collection_id}))
        if item["status"] in ("ready", "error"):
            return dict(item)
        assert time.monotonic() < deadline, item
        time.sleep(0.1)


@EACH_BACKEND
def test_api_file_library_lists_imports_and_resyncs_by_content_hash(
    world: tuple[LiveServer, ScriptedOpenAIServer], client: httpx.Client, library: str, site: str
) -> None:
    _, scripted = world
    _guide_site()
    Library.files = {
        "folder-1": {"name": "Handbook", "type": "folder", "parentId": None},
        "doc-1": {
            "name": "Leave.md",
            "parentId": "folder-1",
            "content": "# Leave\n\nStaff get 30 days of leave.",
        },
        "doc-2": {"name": "Cooling.html", "parentId": "folder-1", "previewUrl": f"{site}/guide/c"},
    }
    dataset_id = _library_dataset(client, library)
    detail = ok(client.get("/api/core/dataset/detail", params={"id": dataset_id}))
    assert detail["type"] == "apiDataset" and detail["apiServer"] == {"baseUrl": library, "basePath": ""}
    assert TOKEN not in json.dumps(detail)  # the authorization never comes back

    root = ok(client.post("/api/core/dataset/apiDataset/list", json={"datasetId": dataset_id}))
    assert [(item["id"], item["type"], item["hasChild"]) for item in root] == [("folder-1", "folder", True)]
    inside = ok(
        client.post(
            "/api/core/dataset/apiDataset/list", json={"datasetId": dataset_id, "parentId": "folder-1"}
        )
    )
    assert {item["name"] for item in inside} == {"Leave.md", "Cooling.html"}
    found = ok(
        client.post("/api/core/dataset/apiDataset/list", json={"datasetId": dataset_id, "searchKey": "leave"})
    )
    assert [item["id"] for item in found] == ["doc-1"]

    created = ok(
        client.post(
            "/api/core/dataset/collection/create/apiCollection",
            json={"datasetId": dataset_id, "apiFileId": "doc-1", "name": "Leave.md", "trainingType": "chunk"},
        )
    )
    leave = _wait_ready(client, created["collectionId"])
    assert leave["status"] == "ready" and leave["type"] == "apiFile"
    assert "30 days" in " ".join(_texts(client, leave["_id"]))
    preview = ok(
        client.post(
            "/api/core/dataset/collection/create/apiCollection",
            json={"datasetId": dataset_id, "apiFileId": "doc-2", "name": "Cooling.html"},
        )
    )
    assert "cooling" in " ".join(_texts(client, _wait_ready(client, preview["collectionId"])["_id"]))

    embedded = len(scripted.embedding_requests)
    same = ok(client.post("/api/core/dataset/collection/sync", json={"collectionId": leave["_id"]}))
    assert same == "sameRaw" and len(scripted.embedding_requests) == embedded

    Library.files["doc-1"]["content"] = "# Leave\n\nStaff now get 32 days of leave."
    assert (
        ok(client.post("/api/core/dataset/collection/sync", json={"collectionId": leave["_id"]})) == "success"
    )
    run = _settled_run(client, dataset_id, count=2, collectionId=leave["_id"])
    assert (run["status"], run["changed"]) == ("done", 1), run
    assert "32 days" in " ".join(_texts(client, leave["_id"]))
    assert all("32 days" in text for text in _embedded_since(scripted, embedded))

    del Library.files["doc-1"]
    ok(client.post("/api/core/dataset/sync", json={"datasetId": dataset_id}))
    run = _settled_run(client, dataset_id, count=4)
    assert (run["seen"], run["deleted"], run["unchanged"]) == (2, 1, 1), run
    assert leave["_id"] not in {item["_id"] for item in _collections(client, dataset_id).values()}


def _refusal(message: str) -> bool:
    """The egress guard's refusal (a blocked address, or a URL it will not read as one)."""
    return any(
        text in message for text in ("Request to private network not allowed", "Invalid URL", "Refused URL")
    )


def _blocked_vectors() -> list[str]:
    if not VECTORS_FILE.exists():
        return []
    urls = []
    for line in VECTORS_FILE.read_text(encoding="utf-8").splitlines():
        vector = json.loads(line)
        if (
            vector["expect"] == "block"
            and vector["dns_fixture"] is None
            and vector["numeric_connects_to"] is not None
            # the test server's own address is allowed (egress_allow_cidrs), also written another way
            and not any(form in vector["numeric_connects_to"].lower() for form in ("127.0.0.1", "7f00:1"))
        ):
            urls.append(vector["url"])
    return urls[:12]


@pytest.mark.skipif(not _blocked_vectors(), reason="../shared/datasets/ssrf-vectors/vectors.jsonl is absent")
@pytest.mark.parametrize("url", _blocked_vectors())
def test_ssrf_vectors_are_refused_on_the_library_and_website_paths(client: httpx.Client, url: str) -> None:
    dataset_id = _library_dataset(client, url)
    refused = client.post("/api/core/dataset/apiDataset/list", json={"datasetId": dataset_id})
    assert refused.status_code == 400 and _refusal(refused.json()["message"]), refused.text
    website = _website(client, url)
    run = _settled_run(client, website)
    assert (
        run["status"] == "failed" and run["error"].startswith("EgressDenied: ") and _refusal(run["error"])
    ), run


@EACH_BACKEND
def test_a_preview_url_into_the_private_network_is_refused(client: httpx.Client, library: str) -> None:
    Library.files = {
        "doc-9": {"name": "Meta.html", "parentId": None, "previewUrl": "http://169.254.169.254/latest/"}
    }
    dataset_id = _library_dataset(client, library)
    created = ok(
        client.post(
            "/api/core/dataset/collection/create/apiCollection",
            json={"datasetId": dataset_id, "apiFileId": "doc-9", "name": "Meta.html"},
        )
    )
    item = _wait_ready(client, created["collectionId"])
    assert item["status"] == "error" and "private network" in item["errorMsg"], item
    run = _settled_run(client, dataset_id)
    assert run["status"] == "failed" and run["failures"][0]["source"] == "doc-9", run


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"type": "apiDataset"}, "apiServer: required"),
        ({"type": "websiteDataset"}, "websiteConfig: required"),
        ({"type": "websiteDataset", "websiteConfig": {"url": "ftp://x/"}}, "http:// or https://"),
        (
            {"type": "websiteDataset", "websiteConfig": {"url": "http://x/", "selector": "a:hover"}},
            "not supported",
        ),
        (
            {"type": "websiteDataset", "websiteConfig": {"url": "http://x/", "prefix": "guide"}},
            "starting with /",
        ),
        ({"apiServer": {"baseUrl": "http://x/"}}, "only a dataset of type apiDataset"),
    ],
)
def test_bad_source_settings_are_refused_naming_the_field(
    client: httpx.Client, body: dict[str, Any], message: str
) -> None:
    response = client.post("/api/core/dataset/create", json={"name": "Bad", **body})
    assert response.status_code == 400 and message in response.json()["message"], response.text


@EACH_BACKEND
def test_sync_routes_refuse_what_has_no_source(client: httpx.Client) -> None:
    plain = str(ok(client.post("/api/core/dataset/create", json={"name": "Plain"})))
    text = ok(
        client.post(
            "/api/core/dataset/collection/create/text",
            json={"datasetId": plain, "name": "t", "text": "Some text."},
        )
    )
    answers = [
        client.post("/api/core/dataset/collection/sync", json={"collectionId": text["collectionId"]}),
        client.post("/api/core/dataset/sync", json={"datasetId": plain}),
        client.post("/api/core/dataset/apiDataset/list", json={"datasetId": plain}),
        client.post(
            "/api/core/dataset/collection/create/apiCollection",
            json={"datasetId": plain, "apiFileId": "x", "name": "x"},
        ),
    ]
    for response in answers:
        assert response.status_code == 400, response.text
    assert "only link, website page and API file" in answers[0].json()["message"]
    assert "not an API file library" in answers[2].json()["message"]


def test_a_link_import_applies_its_web_page_selector(client: httpx.Client, site: str) -> None:
    _guide_site()
    dataset_id = str(ok(client.post("/api/core/dataset/create", json={"name": "Links"})))
    body = {
        "datasetId": dataset_id,
        "link": f"{site}/guide/a",
        "metadata": {"webPageSelector": "div.doc > p"},
    }
    created = ok(client.post("/api/core/dataset/collection/create/link", json=body))
    item = _wait_ready(client, created["collectionId"])
    text = " ".join(_texts(client, item["_id"]))
    assert item["status"] == "ready" and "first steps" in text, item
    assert "NAVIGATION" not in text and "FOOTER" not in text  # only the paragraph
    bad = client.post(
        "/api/core/dataset/collection/create/link",
        json={**body, "metadata": {"webPageSelector": "p:first-child"}},
    )
    assert bad.status_code == 400 and "metadata.webPageSelector" in bad.json()["message"], bad.text
    missing = ok(
        client.post(
            "/api/core/dataset/collection/create/link",
            json={**body, "metadata": {"webPageSelector": "#nowhere"}},
        )
    )
    failed = _wait_ready(client, missing["collectionId"])
    assert failed["status"] == "error" and "matches nothing" in failed["errorMsg"], failed


def _sync_job(server: LiveServer, sync_id: str) -> Any:
    """The ``dataset.sync`` job of a run, once a worker has finished with it."""
    import asyncio

    from fathom.datasets.sync import SYNC_JOB_KIND
    from fathom.platform import Platform

    async def read() -> Any:
        platform = Platform.build(server.platform.settings)
        try:
            jobs = await platform.jobs.list_jobs(kind=SYNC_JOB_KIND)
            return next(job for job in jobs if job.payload.get("syncId") == sync_id)
        finally:
            await platform.db.close()

    deadline = time.monotonic() + 60
    while (job := asyncio.run(read())).status in ("queued", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.1)
    return job


def test_deleting_a_synced_knowledge_base_takes_its_source_and_runs_with_it(
    world: tuple[LiveServer, ScriptedOpenAIServer], client: httpx.Client, site: str
) -> None:
    _guide_site()
    dataset_id = _website(client, f"{site}/guide/", selector=".doc", prefix="/guide/", maxDepth=0)
    _settled_run(client, dataset_id)
    queued = ok(client.post("/api/core/dataset/sync", json={"datasetId": dataset_id}))
    ok(client.delete("/api/core/dataset/delete", params={"id": dataset_id}))
    gone = client.post("/api/core/dataset/syncHistory", json={"datasetId": dataset_id})
    assert gone.status_code == 404, gone.text
    job = _sync_job(world[0], queued["syncId"])
    assert job.status == "done" and job.attempts == 1, job  # not retried: there is nothing left to sync


def test_update_turns_auto_sync_on_and_replaces_a_library_keeping_its_token(
    client: httpx.Client, library: str
) -> None:
    Library.files = {
        "doc-1": {"name": "Leave.md", "parentId": None, "content": "Staff get 30 days of leave."}
    }
    dataset_id = _library_dataset(client, "https://files.invalid/api")
    assert "autoSync" in ok(client.get("/api/core/dataset/detail", params={"id": dataset_id}))
    body = {"id": dataset_id, "autoSync": True, "autoSyncInterval": 3600, "apiServer": {"baseUrl": library}}
    ok(client.post("/api/core/dataset/update", json=body))
    detail = ok(client.get("/api/core/dataset/detail", params={"id": dataset_id}))
    assert detail["autoSync"] is True and detail["nextSyncTime"] and detail["apiServer"]["baseUrl"] == library
    listed = ok(client.post("/api/core/dataset/apiDataset/list", json={"datasetId": dataset_id}))
    assert [item["id"] for item in listed] == ["doc-1"]  # the token sent at create still goes with it
    ok(client.post("/api/core/dataset/update", json={"id": dataset_id, "autoSync": False}))
    detail = ok(client.get("/api/core/dataset/detail", params={"id": dataset_id}))
    assert detail["autoSync"] is False and detail["nextSyncTime"] is None
    plain = str(ok(client.post("/api/core/dataset/create", json={"name": "Plain"})))
    wrong = client.post(
        "/api/core/dataset/update", json={"id": plain, "websiteConfig": {"url": "https://x.example/"}}
    )
    assert wrong.status_code == 400 and "websiteConfig" in wrong.json()["message"], wrong.text
