"""Helpers shared by the console browser tests."""

from __future__ import annotations

import time
from typing import Any


def sign_in(page: Any, base_url: str, key: str) -> None:
    page.goto(base_url + "/")
    page.fill("input[name=apiKey]", key)
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("nav.sidebar")


def data(response: Any) -> Any:
    body = response.json()
    assert body["code"] == 200, body
    return body["data"]


def wait_ready(client: Any, dataset_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        page = data(client.post("/api/core/dataset/collection/listV2", json={"datasetId": dataset_id}))
        if page["list"] and all(c["status"] == "ready" for c in page["list"]):
            return
        assert not any(c["status"] == "error" for c in page["list"]), page
        time.sleep(0.2)
    raise AssertionError("ingestion did not finish")
