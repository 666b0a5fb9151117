"""The console's model-made training in Chromium: a text imported as "Q&A by the model" with the user's
instructions is sent to the scripted model; the collection shows its training mode, the chunk the model
failed on is listed with its error, and "Retry" trains it: the pair the model wrote is stored."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from console_support import sign_in

from fathom.testing import Turn

TEXT = "Refunds are paid back to the original card within five working days."


def test_qa_training_mode_failed_chunk_and_retry(
    chat_live_server: Any, scripted_model: Any, browser: Any, screenshots: Path
) -> None:
    scripted_model.set_script(
        [
            Turn(status=400, error="the model refused this chunk"),
            "Q1: Who pays refunds?\nA1: The shop, in five days.",
        ]
    )
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        sign_in(page, chat_live_server.base_url, chat_live_server.admin_key)
        page.click("nav >> text=Knowledge")
        page.fill("input[name=datasetName]", "Refund FAQ")
        page.click("button:has-text('Create')")
        page.wait_for_selector("h1:has-text('Refund FAQ')")

        page.click("button:has-text('Text')")
        page.fill("input[name=textName]", "Refunds")
        page.fill("textarea[name=text]", TEXT)
        page.check("input[name=trainingMode][value=qa]")
        page.fill("textarea[name=qaPrompt]", "Write FAQ entries for support agents.")
        page.click("button:has-text('Import text')")

        row = "tr[data-collection='Refunds']"
        page.wait_for_selector(f"{row}[data-status=ready] >> text=1 failed chunks", timeout=60_000)
        assert page.locator(f"{row} [data-training=qa]").inner_text() == "Q&A"
        sent = scripted_model.chat_requests[0]["messages"][0]["content"]
        assert sent.startswith("Write FAQ entries for support agents.") and TEXT in sent

        page.click(f"{row} button:has-text('1 failed chunks')")
        failed = page.wait_for_selector("[data-testid=training-errors] [data-failed-chunk='0']")
        assert "the model refused this chunk" in failed.inner_text() and TEXT in failed.inner_text()
        page.screenshot(path=str(screenshots / "02c-knowledge-failed-chunks.png"))
        with page.expect_response("**/api/core/dataset/training/updateTrainingData") as retried:
            page.click("[data-failed-chunk='0'] button:has-text('Retry')")
        assert retried.value.json()["code"] == 200
        page.wait_for_selector("[data-testid=training-errors] >> text=No failed chunks.")
        page.click("[data-testid=training-errors] button:has-text('Close')")

        # the retried chunk is trained: one row written, nothing failed any more
        done = f"{row}[data-status=ready] td:nth-child(4):has-text('1/1')"
        page.wait_for_selector(done, timeout=60_000)
        assert "failed chunks" not in page.locator(row).inner_text()
        page.click(f"{row} button.link")
        page.wait_for_selector(".modal .chunk pre:has-text('Who pays refunds?')")
        assert "The shop, in five days." in page.locator(".modal .chunk").inner_text()
    finally:
        page.close()
