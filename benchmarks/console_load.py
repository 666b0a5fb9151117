"""First-load size and time-to-interactive of the web console, on loopback, in headless Chromium.

    .venv/bin/python benchmarks/console_load.py [--runs 10]

Starts a Fathom server on a free loopback port (fresh data dir), then for each page loads it in a new
browser context (empty cache) with the API key already in localStorage, and records:
- bytes over the wire for the first load (encoded body sizes of every response: gzip as served);
- DOMContentLoaded and time-to-interactive = navigation start → the page's main control is visible
  (the element a user acts on first), measured with the page's own clock.
Needs Playwright for Python and Debian's chromium (`apt-get install chromium`).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import sync_playwright

from fathom.config import Settings
from fathom.platform import Platform
from fathom.server.app import create_app

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
PAGES = [
    ("login", "/", "input[name=apiKey]", False),
    ("knowledge list", "/knowledge", "input[name=datasetName]", True),
    ("chat", "/chat", "textarea[name=message]", True),
    ("keys & usage", "/keys", "input[name=keyName]", True),
    ("workflow editor", "/apps/{app}/workflow", ".react-flow__node", True),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(data: Path) -> tuple[str, str, uvicorn.Server]:
    settings = Settings(data_dir=data, port=free_port(), workers=0)
    platform = Platform.build(settings)

    async def prepare() -> tuple[str, str]:
        try:
            boot = await platform.prepare()
            assert boot.admin_key
            return boot.admin_key, boot.team_id
        finally:
            await platform.db.close()

    key, _ = asyncio.run(prepare())
    server = uvicorn.Server(
        uvicorn.Config(create_app(platform, run_workers=False), port=settings.port, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return f"http://127.0.0.1:{settings.port}", key, server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, key, server = start_server(Path(tmp) / "data")
        import httpx

        reply = httpx.post(
            base + "/api/core/app/create",
            headers={"Authorization": f"Bearer {key}"},
            json={
                "name": "bench",
                "type": "advanced",
                "nodes": [
                    {
                        "nodeId": "workflowStartNodeId",
                        "flowNodeType": "workflowStart",
                        "name": "Start",
                        "inputs": [],
                        "outputs": [{"id": "userChatInput", "key": "userChatInput"}],
                    }
                ],
                "edges": [],
            },
        ).json()
        app_id = reply["data"]
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
            print(f"{'page':18} {'bytes (gzip)':>13} {'DCL ms':>8} {'TTI ms p50':>11} {'TTI ms p90':>11}")
            for name, path, ready, signed_in in PAGES:
                ttis, dcls, sizes = [], [], []
                for _ in range(args.runs):
                    context = browser.new_context()
                    if signed_in:
                        context.add_init_script(f"localStorage.setItem('fathom.apiKey', '{key}')")
                    page = context.new_page()
                    page.goto(base + path.format(app=app_id))
                    page.wait_for_selector(ready)
                    tti = page.evaluate("performance.now()")
                    timing = page.evaluate(
                        "(() => { const n = performance.getEntriesByType('navigation')[0];"
                        " const r = performance.getEntriesByType('resource');"
                        " return {dcl: n.domContentLoadedEventEnd, bytes: n.encodedBodySize +"
                        " r.filter(e => !e.name.includes('/api/'))"
                        ".reduce((s, e) => s + e.encodedBodySize, 0)}; })()"
                    )
                    ttis.append(tti)
                    dcls.append(timing["dcl"])
                    sizes.append(timing["bytes"])
                    context.close()
                ttis.sort()
                p90 = ttis[min(len(ttis) - 1, int(0.9 * len(ttis)))]
                print(
                    f"{name:18} {statistics.median(sizes):>13,.0f} {statistics.median(dcls):>8.0f}"
                    f" {statistics.median(ttis):>11.0f} {p90:>11.0f}"
                )
            browser.close()
        server.should_exit = True


if __name__ == "__main__":
    main()
