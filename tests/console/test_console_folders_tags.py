"""The console's folders, tags and suggested questions in Chromium: make a folder in Knowledge, a
knowledge base inside it reached through the folder and left through the breadcrumb, a folder deleted
with what is in it after the confirmation; tags added to and taken off a collection; and, for an app
whose question guide is on, the suggested questions shown under the answer and sent when clicked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from console_support import data, sign_in, wait_ready

from fathom.testing import text_turn

MODEL = "scripted-chat"


def test_folders_hold_knowledge_bases_and_go_with_them(
    one_attempt_server: Any, browser: Any, screenshots: Path
) -> None:
    server = one_attempt_server
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        sign_in(page, server.base_url, server.admin_key)
        page.click("nav >> text=Knowledge")
        page.once("dialog", lambda dialog: dialog.accept("Manuals"))
        page.click("button:has-text('+ Folder')")
        page.click("[data-folder=Manuals]")
        page.wait_for_selector("[data-testid=breadcrumb]:has-text('Manuals')")
        page.fill("input[name=datasetName]", "Printer")
        page.click("button:has-text('Create')")
        page.wait_for_selector("h1:has-text('Printer')")
        page.screenshot(path=str(screenshots / "30-knowledge-in-folder.png"))
        page.click("[data-testid=breadcrumb] >> text=Manuals")
        page.wait_for_selector(".tile:has-text('Printer')")
        page.click("[data-testid=breadcrumb] >> text=Knowledge bases")
        page.wait_for_selector("[data-folder=Manuals]")
        assert page.locator(".tile:has-text('Printer')").count() == 0  # it is in the folder, not at the root
        with server.client(server.admin_key) as client:
            folder = next(
                d for d in data(client.post("/api/core/dataset/list", json={})) if d["name"] == "Manuals"
            )
            inside = data(client.post("/api/core/dataset/list", json={"parentId": folder["_id"]}))
        assert [d["name"] for d in inside] == ["Printer"]

        page.click("[data-folder=Manuals]")
        page.wait_for_selector(".tile:has-text('Printer')")
        messages: list[str] = []

        def decline(dialog: Any) -> None:
            messages.append(dialog.message)
            dialog.dismiss()

        page.once("dialog", decline)
        page.click("button:has-text('Delete folder')")
        page.wait_for_timeout(200)
        assert messages and "Manuals" in messages[0] and "everything in it" in messages[0]
        page.once("dialog", lambda dialog: dialog.accept())
        page.click("button:has-text('Delete folder')")
        # the console goes to the parent (the root: no breadcrumb) once the delete has answered; the
        # folder's own page also has the "Knowledge bases" heading, so that alone proves nothing
        page.wait_for_selector("[data-testid=breadcrumb]", state="detached")
        page.wait_for_selector("h1:has-text('Knowledge bases')")
        page.wait_for_selector("[data-folder=Manuals]", state="detached")
        with server.client(server.admin_key) as client:
            names = [
                d["name"] for d in data(client.post("/api/core/dataset/list", json={"searchKey": "Printer"}))
            ]
        assert names == []
    finally:
        page.close()


def test_tags_are_added_to_and_taken_off_a_collection(one_attempt_server: Any, browser: Any) -> None:
    server = one_attempt_server
    with server.client(server.admin_key) as client:
        kb = data(client.post("/api/core/dataset/create", json={"name": "Tagged"}))
        body = {"datasetId": kb, "name": "policy", "text": "Refunds take five days.", "tags": ["money"]}
        collection = data(client.post("/api/core/dataset/collection/create/text", json=body))["collectionId"]
        wait_ready(client, kb)
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        sign_in(page, server.base_url, server.admin_key)
        page.goto(f"{server.base_url}/knowledge/{kb}")
        row = page.locator("tr[data-collection=policy]")
        row.locator("[data-tag=money]").wait_for()
        row.locator("input[name=tag]").fill("refunds")
        row.locator("input[name=tag]").press("Enter")
        row.locator("[data-tag=refunds]").wait_for()
        with server.client(server.admin_key) as client:
            shown = data(client.get("/api/core/dataset/collection/detail", params={"id": collection}))["tags"]
            assert shown == ["money", "refunds"]
            tags = data(client.get("/api/core/dataset/tag/getAllTags", params={"datasetId": kb}))["list"]
            assert {tag["tag"] for tag in tags} == {"money", "refunds"}
        row.locator("[aria-label='Remove tag money']").click()
        row.locator("[data-tag=money]").wait_for(state="detached")
        with server.client(server.admin_key) as client:
            assert data(client.get("/api/core/dataset/collection/detail", params={"id": collection}))[
                "tags"
            ] == ["refunds"]
    finally:
        page.close()


def test_suggested_questions_show_under_the_answer_and_are_sent_when_clicked(
    chat_live_server: Any, browser: Any, scripted_model: Any, screenshots: Path
) -> None:
    server = chat_live_server
    with server.client(server.admin_key) as client:
        body = {"name": "Guided", "type": "simple", "simpleConfig": {"model": MODEL, "questionGuide": True}}
        app_id = data(client.post("/api/core/app/create", json=body))

    def script(request: Any) -> Any:
        last = str(request.json["messages"][-1]["content"])
        if last.startswith("You are an AI assistant tasked with predicting"):
            return text_turn("['Which card?', 'Any fees?', 'How to apply?']")
        return text_turn(f"Answer to: {last}")

    def guide_requests() -> int:
        prompt = "You are an AI assistant tasked with predicting"
        return sum(str(r["messages"][-1]["content"]).startswith(prompt) for r in scripted_model.chat_requests)

    scripted_model.set_script(script)
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        sign_in(page, server.base_url, server.admin_key)
        page.goto(f"{server.base_url}/chat/{app_id}")
        asked = guide_requests()
        page.fill("textarea[name=message]", "How long do refunds take?")
        page.keyboard.press("Enter")
        guide = page.wait_for_selector("[data-testid=question-guide]", timeout=30_000)
        assert [b.inner_text() for b in guide.query_selector_all("button")] == [
            "Which card?",
            "Any fees?",
            "How to apply?",
        ]
        # made once, with the answer, and read from its stream (no second request for them)
        assert guide_requests() == asked + 1
        page.screenshot(path=str(screenshots / "31-question-guide.png"))
        page.click("[data-testid=question-guide] >> text=Any fees?")
        page.wait_for_selector(".msg.user:has-text('Any fees?')")
        page.wait_for_selector(".msg.ai:has-text('Answer to: Any fees?')", timeout=30_000)
    finally:
        page.close()


def test_collection_folders_are_opened_and_imports_go_into_the_open_one(
    one_attempt_server: Any, browser: Any
) -> None:
    server = one_attempt_server
    with server.client(server.admin_key) as client:
        kb = data(client.post("/api/core/dataset/create", json={"name": "Filed"}))
    page = browser.new_page(viewport={"width": 1360, "height": 860})
    try:
        sign_in(page, server.base_url, server.admin_key)
        page.goto(f"{server.base_url}/knowledge/{kb}")
        page.once("dialog", lambda dialog: dialog.accept("Policies"))
        page.click("[data-testid=collection-path] ~ button:has-text('+ Folder')")
        page.click("[data-collection-folder=Policies]")
        page.wait_for_selector("[data-testid=collection-path]:has-text('Policies')")
        page.get_by_role("button", name="Text", exact=True).click()
        page.fill("input[name=textName]", "refunds")
        page.fill("textarea[name=text]", "Refunds are paid within five working days.")
        page.click("button:has-text('Import text')")
        page.wait_for_selector("tr[data-collection=refunds]")
        page.click("[data-testid=collection-path] >> text=All files")
        page.wait_for_selector("tr[data-collection=refunds]", state="detached")
        assert page.locator("[data-collection-folder=Policies]").count() == 1
        with server.client(server.admin_key) as client:
            root = data(client.post("/api/core/dataset/collection/listV2", json={"datasetId": kb}))["list"]
            [folder] = root
            inside = data(
                client.post(
                    "/api/core/dataset/collection/listV2", json={"datasetId": kb, "parentId": folder["_id"]}
                )
            )["list"]
        assert (folder["name"], folder["type"]) == ("Policies", "folder")
        assert [item["name"] for item in inside] == ["refunds"]
    finally:
        page.close()
