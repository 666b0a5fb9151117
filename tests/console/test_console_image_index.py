"""The console's image indexes in Chromium: a text with an embedded image imported with "Image indexes"
checked sends the image to the knowledge base's vision model; the collection is labelled so, and the chunk
holding the image carries the description the model wrote."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import sign_in
from live_support import free_port, start_live_server

from fathom.testing import Turn

# a valid 1x1 PNG
PNG_URL = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
TEXT = f"Our office floor plan: ![plan]({PNG_URL})"
DESCRIPTION = "A floor plan with the kitchen next to the meeting room."


@pytest.fixture
def vision_server(tmp_path: Path, scripted_model: Any) -> Iterator[Any]:
    """A live server whose vision model (vision: true) is the scripted loopback model server."""
    from fathom.config import Settings

    models = tmp_path / "models.yaml"
    models.write_text(
        "models:\n"
        f"  - {{id: scripted-vision, type: llm, vision: true, base_url: '{scripted_model.base_url}'}}\n",
        encoding="utf-8",
    )
    settings = Settings(data_dir=tmp_path / "data", port=free_port(), workers=1, models_file=models)
    yield from start_live_server(settings)


def test_text_imported_with_image_indexes(vision_server: Any, scripted_model: Any, browser: Any) -> None:
    scripted_model.set_script(lambda request: Turn(content=DESCRIPTION))
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        sign_in(page, vision_server.base_url, vision_server.admin_key)
        page.click("nav >> text=Knowledge")
        page.fill("input[name=datasetName]", "Office")
        page.click("button:has-text('Create')")
        page.wait_for_selector("h1:has-text('Office')")

        page.click("button:has-text('Text')")
        page.fill("input[name=textName]", "Plan")
        page.fill("textarea[name=text]", TEXT)
        page.check("input[name=imageIndex]")
        with page.expect_request("**/api/core/dataset/collection/create/text") as created:
            page.click("button:has-text('Import text')")
        assert created.value.post_data_json["imageIndex"] is True

        row = "tr[data-collection='Plan']"
        page.wait_for_selector(f"{row}[data-status=ready]", timeout=60_000)
        assert page.locator(f"{row} [data-training=chunk]").inner_text() == "image indexes"
        (request,) = scripted_model.chat_requests
        parts = request["messages"][0]["content"]
        assert {"type": "image_url", "image_url": {"url": PNG_URL}} in parts
        page.click(f"{row} button.link")
        shown = page.wait_for_selector(".modal .chunk [data-index-type=image]", timeout=30_000)
        assert shown.inner_text() == f"image: {DESCRIPTION}"
    finally:
        page.close()
