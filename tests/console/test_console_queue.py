"""A collection waiting in the ingestion queue shows its place ("queued (#N)", listV2's queuePosition) on
its row, at desktop and phone size. The server has no ingestion worker, so nothing leaves the queue."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import data, sign_in
from live_support import free_port, start_live_server

from fathom.config import Settings

VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def queued_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root: Path = tmp_path_factory.mktemp("queue")
    yield from start_live_server(Settings(data_dir=root / "data", port=free_port(), workers=0))


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_waiting_collections_show_their_place_in_the_queue(
    queued_server: Any, browser: Any, size: str
) -> None:
    server = queued_server
    with server.client(server.admin_key) as client:
        kb = data(client.post("/api/core/dataset/create", json={"name": f"Queue {size}"}))
        for name in ("first", "second"):
            body = {"datasetId": kb, "name": name, "text": f"The {name} text to ingest."}
            data(client.post("/api/core/dataset/collection/create/text", json=body))
        rows = data(client.post("/api/core/dataset/collection/listV2", json={"datasetId": kb}))["list"]
    places = {row["name"]: row["queuePosition"] for row in rows}
    # the queue is the server's: a second run's collections queue behind the first run's
    assert places["first"] < places["second"] and places["first"] >= 1, places
    page = browser.new_page(viewport=VIEWPORTS[size])
    try:
        sign_in(page, server.base_url, server.admin_key)
        page.goto(f"{server.base_url}/knowledge/{kb}")
        for name, place in places.items():
            badge = page.wait_for_selector(f"tr[data-collection='{name}'] .badge")
            assert badge.inner_text() == f"queued (#{place})"
    finally:
        page.close()
