"""Browser tour of an API file library knowledge base: browse the library's folders in the console's file
picker, import a file, watch it become a ready collection, change the file and press "Sync now": the sync
history shows what the run saw and changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from console_support import data, sign_in

from loopback_servers import serve_on_loopback
from source_servers import TOKEN, Library


@pytest.fixture
def library() -> Iterator[str]:
    Library.files = {
        "folder-1": {"name": "Handbook", "type": "folder", "parentId": None},
        "doc-1": {
            "name": "Leave.md",
            "parentId": "folder-1",
            "content": "# Leave\n\nStaff get 30 days of leave.",
        },
    }
    with serve_on_loopback(Library) as url:
        yield url


def test_api_file_library_picker_import_and_sync(
    one_attempt_server: Any, library: str, browser: Any, screenshots: Path
) -> None:
    server = one_attempt_server
    body = {"name": "Files", "type": "apiDataset", "apiServer": {"baseUrl": library, "authorization": TOKEN}}
    with httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {server.admin_key}"}
    ) as api:
        dataset_id = data(api.post("/api/core/dataset/create", json=body))
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    try:
        sign_in(page, server.base_url, server.admin_key)
        page.goto(f"{server.base_url}/knowledge/{dataset_id}")
        page.wait_for_selector("[data-testid=api-file-picker] >> text=Handbook/")
        page.click("[data-testid=api-file-picker] >> text=Handbook/")
        page.click("[data-api-file='Leave.md'] >> button:has-text('Import')")
        page.wait_for_selector("tr[data-collection='Leave.md'][data-status=ready]", timeout=60_000)
        page.wait_for_selector("[data-testid=sync-history] tr[data-status=done]", timeout=60_000)
        page.screenshot(path=str(screenshots / "source-sync-01-imported.png"))

        Library.files["doc-1"]["content"] = "# Leave\n\nStaff now get 32 days of leave."
        page.click("button:has-text('Sync now')")
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=sync-history] tr[data-status=done]').length === 2",
            timeout=60_000,
        )
        newest = page.locator("[data-testid=sync-history] tbody tr").first
        cells = newest.locator("td").all_inner_texts()
        assert cells[2:] == ["1", "0", "1", "0", "0", "0"], cells  # seen, added, changed, unchanged, …
        page.screenshot(path=str(screenshots / "source-sync-02-synced.png"))
    finally:
        page.close()
