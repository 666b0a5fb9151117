"""A ``fathom worker`` process killed with SIGKILL in the middle of a website sync: every page it had
swapped in is whole, the page it was on shows no half update, and after its lease expires another
worker resumes the run, re-embedding none of the pages already done."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from killed_worker_support import (
    WorkerProcess,
    db_upgrade,
    finish_after_lease,
    read,
    worker_env,
    worker_settings,
)

from fathom.datasets.sync import WebsiteConfig
from fathom.llm.local_embedding import LOCAL_EMBEDDING_MODEL_ID
from fathom.platform import Platform
from loopback_servers import serve_on_loopback
from source_servers import Site, page

PAGES = 30


def _site() -> None:
    paragraph = " ".join(
        f"Sentence {n} explains one more detail of the maintenance routine." for n in range(40)
    )
    links = tuple(f"/p{i}" for i in range(PAGES))
    Site.robots = ""
    Site.pages = {"/": page("Index", "The index of the maintenance manual.", links)}
    for i in range(PAGES):
        Site.pages[f"/p{i}"] = page(f"Page {i}", f"Part {i}. {paragraph}")


def test_a_killed_sync_worker_leaves_whole_pages_and_the_run_resumes(tmp_path: Path) -> None:
    env = worker_env(tmp_path, FATHOM_EGRESS_ALLOW_CIDRS=json.dumps(["127.0.0.1/32"]))
    settings = worker_settings(tmp_path)
    upgrade = db_upgrade(env)
    assert upgrade.returncode == 0, upgrade.stdout
    _site()
    with serve_on_loopback(Site) as url:

        async def setup(platform: Platform) -> tuple[str, str]:
            boot = await platform.prepare()
            dataset = await platform.datasets.create_dataset(
                boot.team_id, "Site", vector_model=LOCAL_EMBEDDING_MODEL_ID
            )
            sync = await platform.syncs.configure_website(
                dataset, WebsiteConfig(url=f"{url}/"), auto_sync=False
            )
            return dataset.id, sync.id

        dataset_id, sync_id = read(settings, setup)

        async def state(platform: Platform) -> tuple[Any, dict[str, int]]:
            run = next(r for r in await platform.syncs.sources.list_syncs(dataset_id) if r.id == sync_id)
            collections, _ = await platform.datasets.list_collections(run.team_id, dataset_id, limit=1000)
            chunks = {}
            for collection in collections:
                rows, _ = await platform.chunks.list_chunks(run.team_id, collection.id, limit=1000)
                chunks[str(collection.raw_link)] = len(rows)
            return run, chunks

        with WorkerProcess(env, deadline_s=180) as worker:
            for run, _ in worker.poll(lambda: read(settings, state)):
                if run.status == "running" and 2 <= run.counts.get("added", 0) < PAGES - 2:
                    break
                assert worker.running(), run
        run, chunks = read(settings, state)
        assert run.status == "running" and run.counts["added"] < PAGES + 1  # it really died half-way
        whole = {link for link, count in chunks.items() if count}
        sizes = {count for count in chunks.values() if count}
        assert len(sizes) <= 2  # the index page and the content pages: each either whole or empty
        assert len(whole) >= 2

        finisher = finish_after_lease(env)
        assert finisher.returncode == 0, finisher.stderr
        run, chunks = read(settings, state)
    assert run.status == "done" and run.attempts == 2, run
    assert run.counts["seen"] == PAGES + 1 and run.counts["failed"] == 0, run.counts
    assert run.counts["unchanged"] == len(whole)  # what the killed worker swapped in cost nothing
    assert run.counts["added"] == PAGES + 1 - len(whole)
    assert len(chunks) == PAGES + 1 and all(chunks.values())
