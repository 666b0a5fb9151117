"""Fixtures for the console tests: the live server of ``tests/server/conftest.py`` and a browser.

Browser tests need Playwright for Python and Debian's Chromium (``/usr/bin/chromium``); when either is
missing they skip with the reason printed. ``.ci/run`` installs both.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import browser_unavailable, launch_chromium


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


_server_tests = Path(__file__).parents[1] / "server"
live_support = sys.modules.get("live_support") or _load("live_support", _server_tests / "live_support.py")
server_support = _load("fathom_server_test_support", _server_tests / "conftest.py")

LiveServer = live_support.LiveServer
start_live_server = live_support.start_live_server
free_port = live_support.free_port
live_server = server_support.live_server
module_live_server = server_support.module_live_server

SCREENSHOTS = Path(__file__).parents[2] / "build" / "console-screenshots"
DOCS = Path(__file__).parents[2] / "docs"
UPDATE_DOCS_SCREENSHOTS = "FATHOM_UPDATE_SCREENSHOTS"
_SESSION_START = time.time()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With ``FATHOM_UPDATE_SCREENSHOTS=1``, the screenshots this run took that the docs show
    (``images/console/<name>`` in ``docs/*.md`` or ``README.md``) replace the copies in
    ``docs/images/console/``; without it the docs' images are left alone. Most pictures of
    ``docs/console.md`` are the README walkthrough's (tests/repo/readme_screenshots.py, which writes them
    itself); the console tests take only those it names in ``SHOT_BY_CONSOLE_TESTS`` (none at present)."""
    if not os.environ.get(UPDATE_DOCS_SCREENSHOTS) or not SCREENSHOTS.is_dir():
        return
    texts = [path.read_text(encoding="utf-8") for path in [*DOCS.glob("*.md"), DOCS.parent / "README.md"]]
    shown = {name for text in texts for name in re.findall(r"images/console/([\w.-]+\.png)", text)}
    for name in sorted(shown):
        shot = SCREENSHOTS / name
        if shot.is_file() and shot.stat().st_mtime >= _SESSION_START:
            shutil.copyfile(shot, DOCS / "images" / "console" / name)
            print(f"docs/images/console/{name} updated")


@pytest.fixture(scope="module")
def module_chromium() -> Iterator[Any]:
    """Headless Debian Chromium, one per test module (a launch with its Playwright driver costs ~1.8 s of
    CPU on this 2-core machine). Playwright's sync API keeps an event loop running in this thread while
    it lives, so servers started beside it prepare their database on a thread of their own
    (``tests/run_apart.py``)."""
    reason = browser_unavailable()
    if reason:
        print(f"SKIP console browser tests: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        instance = launch_chromium(pw)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def browser(module_chromium: Any) -> Iterator[Any]:
    """The module's Chromium, as a fresh one to each test: every context (and so every page, cookie and
    storage) a test opened is closed after it."""
    before = set(module_chromium.contexts)
    try:
        yield module_chromium
    finally:
        for context in module_chromium.contexts:
            if context not in before:
                context.close()


@pytest.fixture
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


MODEL = "scripted-chat"


@pytest.fixture
def scripted_model() -> Iterator[Any]:
    from fathom.testing import ScriptedOpenAIServer

    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture
def chat_live_server(tmp_path: Path, scripted_model: Any) -> Iterator[Any]:
    """A live server whose chat model is the scripted loopback model server."""
    from fathom.config import Settings

    settings = Settings(
        data_dir=tmp_path / "data",
        port=free_port(),
        workers=1,
        openai_base_url=scripted_model.base_url,
        chat_model=MODEL,
    )
    yield from start_live_server(settings)


@pytest.fixture
def one_attempt_server(tmp_path: Path) -> Iterator[Any]:
    """A live server whose ingestion jobs fail for good on the first error (no retry back-off) and
    that may fetch web pages from loopback (for the web-page import)."""
    from fathom.config import Settings

    settings = Settings(
        data_dir=tmp_path / "data",
        port=free_port(),
        workers=1,
        job_max_attempts=1,
        max_body_bytes=64 * 1024,
        egress_allow_cidrs=["127.0.0.1/32"],
    )
    yield from start_live_server(settings)


@pytest.fixture
def web_page() -> Iterator[str]:
    """A loopback HTTP server serving one HTML page; yields its URL."""
    import http.server
    import threading

    body = (
        b"<html><head><title>Visa rules</title></head><body><h1>Visa rules</h1>"
        b"<p>Trips to Japan of up to ninety days need no visa for EU citizens.</p></body></html>"
    )

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/visa.html"
    finally:
        server.shutdown()
        server.server_close()
