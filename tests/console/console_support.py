"""Helpers shared by the console browser tests."""

from __future__ import annotations

import importlib.util
import shutil
import time
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def browser_unavailable() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if importlib.util.find_spec("playwright") is None:
        return "playwright (Python) is not installed: pip install -e '.[dev]'"
    if not CHROMIUM.exists() and shutil.which("chromium") is None:
        return "Debian chromium is not installed: apt-get install -y chromium"
    return None


def chromium_path() -> str:
    return str(CHROMIUM) if CHROMIUM.exists() else str(shutil.which("chromium"))


def sign_in(page: Any, base_url: str, key: str, button: str = "Sign in") -> None:
    """Signs in with a key; ``button`` is the sign-in button's text in the page's language."""
    page.goto(base_url + "/")
    page.fill("input[name=apiKey]", key)
    page.click(f"button:has-text('{button}')")
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
