"""Browser tour of the knowledge pages: sign in with a key, create a knowledge base, upload two files by the
file picker, watch both reach "ready", browse and edit a chunk, and run a search test that shows the trace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from console_support import sign_in

HANDBOOK = """# Travel policy

Employees book economy class for flights shorter than six hours. Business class is allowed for longer flights.

## Hotels

The nightly hotel limit is 180 euros in capital cities and 120 euros elsewhere.
"""
EXPENSES = """# Expenses

Receipts must be uploaded within thirty days. Meals are reimbursed up to 45 euros per day.
"""


def drop_files(page: Any, selector: str, files: dict[str, bytes]) -> None:
    """Drop files on an element as a user dragging them from the desktop would (a DataTransfer)."""
    payload = {name: list(content) for name, content in files.items()}
    transfer = page.evaluate_handle(
        """(files) => { const dt = new DataTransfer();
            for (const [name, bytes] of Object.entries(files))
                dt.items.add(new File([new Uint8Array(bytes)], name));
            return dt; }""",
        payload,
    )
    page.dispatch_event(selector, "dragover", {"dataTransfer": transfer})
    page.dispatch_event(selector, "drop", {"dataTransfer": transfer})


def test_knowledge_base_tour(
    one_attempt_server: Any, web_page: str, browser: Any, tmp_path: Path, screenshots: Path
) -> None:
    live_server = one_attempt_server
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        page.goto(live_server.base_url + "/")
        page.wait_for_selector("input[name=apiKey]")
        page.screenshot(path=str(screenshots / "01-login.png"))
        page.fill("input[name=apiKey]", "fathom-wrongkey")
        page.click("button:has-text('Sign in')")
        page.wait_for_selector(".error")
        sign_in(page, live_server.base_url, live_server.admin_key)

        page.click("nav >> text=Knowledge")
        page.fill("input[name=datasetName]", "Handbook")
        page.click("button:has-text('Create')")
        page.wait_for_selector("h1:has-text('Handbook')")

        (tmp_path / "travel.md").write_text(HANDBOOK, encoding="utf-8")
        (tmp_path / "expenses.md").write_text(EXPENSES, encoding="utf-8")
        files = [str(tmp_path / "travel.md"), str(tmp_path / "expenses.md")]
        page.set_input_files("[data-testid=file-input]", files)
        # chunk preview before ingestion: automatic, then custom with a chunk size below the sections' length
        # (FastGPT's splitter, the default, keeps each heading section as a chunk of its own)
        page.click("button:has-text('Preview chunks of travel.md')")
        auto = page.wait_for_selector("[data-testid=chunk-preview-summary]").inner_text()
        assert "of up to 1,000 characters" in auto, auto
        page.check("input[name=chunkMode][value=custom]")
        page.fill("input[name=chunkSize]", "64")
        page.click("button:has-text('Preview chunks of travel.md')")
        summary = "[data-testid=chunk-preview-summary]:has-text('64 characters')"
        small = page.wait_for_selector(summary).inner_text()
        previewed = int(small.split(" ")[0])
        assert previewed > int(auto.split(" ")[0]), (auto, small)
        assert page.locator("tr[data-collection]").count() == 0  # nothing stored by the preview
        page.screenshot(path=str(screenshots / "02a-chunk-preview.png"))
        page.click("button:has-text('Import 2 files')")
        page.wait_for_selector("tr[data-collection='travel.md'][data-status=ready]", timeout=60_000)
        page.wait_for_selector("tr[data-collection='expenses.md'][data-status=ready]", timeout=60_000)
        assert page.locator("tr[data-collection] .progress.done").count() == 2
        travel = page.locator("tr[data-collection='travel.md'] td >> nth=3").inner_text()
        assert travel == f"{previewed}/{previewed}", travel  # ingested as previewed
        page.check("input[name=chunkMode] >> nth=0")  # back to automatic for the next imports

        drop_files(
            page,
            ".dropzone",
            {"broken.pdf": b"%PDF-1.4 this is not really a pdf", "faq.txt": b"Q: Pets? A: No."},
        )
        page.click("button:has-text('Import 2 files')")
        page.wait_for_selector("tr[data-collection='faq.txt'][data-status=ready]", timeout=60_000)
        broken = page.wait_for_selector("tr[data-collection='broken.pdf'][data-status=error]", timeout=60_000)
        assert "Error" in broken.inner_text() or "error" in broken.inner_text()
        with page.expect_response("**/api/core/dataset/training/updateTrainingData") as retried:
            broken.query_selector("button:has-text('Retry')").click()
        assert retried.value.json()["code"] == 200
        page.wait_for_selector("tr[data-collection='broken.pdf'][data-status=error]", timeout=60_000)

        page.click("button:has-text('Web page')")
        page.fill("input[name=link]", web_page)
        page.click("button:has-text('Import page')")
        page.wait_for_selector("tr[data-status=ready] >> text=/visa/i", timeout=60_000)

        page.click("tr[data-collection='expenses.md'] button.link")
        page.wait_for_selector(".modal .chunk")
        page.click(".modal .chunk pre")
        page.fill(".modal textarea >> nth=0", "Receipts must be uploaded within fourteen days.")
        page.click(".modal button:has-text('Save')")
        page.wait_for_selector(".modal .chunk pre:has-text('fourteen days')")
        page.click(".modal button:has-text('Close')")

        page.click(".tabs >> text=Search test")
        page.fill("textarea[name=query]", "hotel limit in capital cities")
        page.select_option("select[name=searchMode]", "mixedRecall")
        page.click("button:has-text('Search')")
        page.wait_for_selector("[data-testid=search-hit]")
        first = page.locator("[data-testid=search-hit]").first
        assert "180 euros" in first.inner_text()
        trace = first.locator("[data-testid=trace]").inner_text()
        assert "embeddingRecall" in trace and "fullTextRecall" in trace and "convex" in trace
    finally:
        page.close()
