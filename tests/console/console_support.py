"""Helpers shared by the console browser tests."""

from __future__ import annotations

import importlib.util
import json
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


# Playwright's 30 s default wait was outlasted under the parallel suite's load (two test processes and a
# browser on two cores): a list request or a model select took longer, twice in CI. Every page waits this
# long instead; what a test asserts is unchanged, only how long a slow machine may take to get there.
PAGE_TIMEOUT_MS = 90_000


class PatientBrowser:
    """A launched Chromium whose every page and context waits ``PAGE_TIMEOUT_MS`` by default; everything
    else is the browser's own."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)

    def new_page(self, **options: Any) -> Any:
        page = self._browser.new_page(**options)
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        return page

    def new_context(self, **options: Any) -> Any:
        context = self._browser.new_context(**options)
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        return context


def launch_chromium(playwright: Any) -> PatientBrowser:
    """Headless Debian Chromium for the console tests (see ``PatientBrowser``)."""
    return PatientBrowser(
        playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
    )


def sign_in(page: Any, base_url: str, key: str, button: str = "Sign in") -> None:
    """Signs in with a key; ``button`` is the sign-in button's text in the page's language."""
    page.goto(base_url + "/")
    page.fill("input[name=apiKey]", key)
    page.click(f"button:has-text('{button}')")
    page.wait_for_selector("nav.sidebar")


class RequestsInFlight:
    """Counts a page's requests sent and not yet answered, from the moment it is made: Playwright's
    ``wait_for_load_state("networkidle")`` returns at once when the page was idle once already (the sign-in
    page, before its sign-in started the next page's requests), so it cannot tell that a page has settled."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.pending: set[Any] = set()
        self.last_change = time.monotonic()
        page.on("request", self._sent)
        page.on("requestfinished", self._done)
        page.on("requestfailed", self._done)

    def _sent(self, request: Any) -> None:
        self.pending.add(request)
        self.last_change = time.monotonic()

    def _done(self, request: Any) -> None:
        self.pending.discard(request)
        self.last_change = time.monotonic()

    def wait_quiet(self, quiet_ms: int = 500, timeout_ms: int = 30_000) -> None:
        """Until no request has been in flight for ``quiet_ms`` (events are taken while the page waits)."""
        deadline = time.monotonic() + timeout_ms / 1000
        while self.pending or time.monotonic() - self.last_change < quiet_ms / 1000:
            assert time.monotonic() < deadline, f"requests still in flight: {[r.url for r in self.pending]}"
            self.page.wait_for_timeout(50)


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


# --- what the console tests and the README walkthrough's screenshots (tests/repo/readme_screenshots.py) both
# build: a workflow that pauses on a user-select node, FastGPT's event stream of a tool call that asks for a
# form, a workflow whose AI chat node is unconnected, and a workflow built by touch in the phone editor


USER_SELECT_APP = {
    "name": "Survey",
    "type": "advanced",
    "nodes": [
        {
            "nodeId": "workflowStartNodeId",
            "flowNodeType": "workflowStart",
            "name": "Start",
            "position": {"x": 0, "y": 0},
            "inputs": [{"key": "userChatInput", "renderTypeList": ["reference", "textarea"], "value": ""}],
            "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string"}],
        },
        {
            "nodeId": "pick",
            "flowNodeType": "userSelect",
            "name": "Pick",
            "position": {"x": 300, "y": 0},
            "inputs": [
                {"key": "description", "renderTypeList": ["textarea"], "value": "Which colour?"},
                {
                    "key": "userSelectOptions",
                    "renderTypeList": ["custom"],
                    "value": [{"key": "o1", "value": "Red"}, {"key": "o2", "value": "Blue"}],
                },
            ],
            "outputs": [{"id": "selectResult", "key": "selectResult", "valueType": "string"}],
        },
        {
            "nodeId": "red",
            "flowNodeType": "answerNode",
            "name": "Red reply",
            "position": {"x": 600, "y": -80},
            "inputs": [
                {"key": "text", "renderTypeList": ["textarea"], "value": "You chose {{$pick.selectResult$}}."}
            ],
            "outputs": [],
        },
        {
            "nodeId": "blue",
            "flowNodeType": "answerNode",
            "name": "Blue reply",
            "position": {"x": 600, "y": 80},
            "inputs": [{"key": "text", "renderTypeList": ["textarea"], "value": "Blue it is."}],
            "outputs": [],
        },
    ],
    "edges": [
        {
            "source": "workflowStartNodeId",
            "target": "pick",
            "sourceHandle": "workflowStartNodeId-source-right",
            "targetHandle": "pick-target-left",
        },
        {
            "source": "pick",
            "target": "red",
            "sourceHandle": "pick-source-o1",
            "targetHandle": "red-target-left",
        },
        {
            "source": "pick",
            "target": "blue",
            "sourceHandle": "pick-source-o2",
            "targetHandle": "blue-target-left",
        },
    ],
    "chatConfig": {},
}


def sse(*events: tuple[str, Any]) -> str:
    """A FastGPT ``/api/v2/chat/completions`` event stream."""
    return "".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n" for name, payload in events)


def delta(content: str = "", reasoning: str = "") -> dict[str, Any]:
    part: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        part["reasoning_content"] = reasoning
    return {"id": "", "object": "", "created": 0, "model": "m", "choices": [{"delta": part, "index": 0}]}


FORM = {
    "type": "userInput",
    "params": {
        "description": "Where to?",
        "inputForm": [{"type": "input", "key": "city", "label": "City", "required": True}],
    },
}

TOOL_CALL_ASKING_A_FORM = sse(  # reasoning, a get_weather tool call and its answer, then a form
    ("flowNodeStatus", {"status": "running", "name": "Agent"}),
    ("answer", delta(reasoning="The user wants weather; ")),
    ("answer", delta(reasoning="call the tool.")),
    ("toolCall", {"tool": {"id": "c1", "toolName": "get_weather", "params": "", "response": ""}}),
    ("toolParams", {"tool": {"id": "c1", "params": '{"city": '}}),
    ("toolParams", {"tool": {"id": "c1", "params": '"Paris"}'}}),
    ("toolResponse", {"tool": {"id": "c1", "response": '{"temp": 21}'}}),
    ("answer", delta("It is **21 °C** in Paris.")),
    ("fastAnswer", delta("\nWhere to?")),
    ("interactive", {"interactive": FORM}),
    ("answer", "[DONE]"),
)


def _node(node_id: str, name: str, kind: str, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
    return {"nodeId": node_id, "name": name, "flowNodeType": kind, "inputs": inputs, "outputs": outputs}


START = _node(
    "workflowStartNodeId",
    "Start",
    "workflowStart",
    [{"key": "userChatInput", "renderTypeList": ["reference", "textarea"], "valueType": "string"}],
    [{"id": "userChatInput", "key": "userChatInput", "valueType": "string", "type": "static"}],
)
LONE_CHAT = _node(  # unconnected, its required question unset
    "aiChat",
    "AI chat",
    "chatNode",
    [
        {
            "key": "model",
            "renderTypeList": ["settingLLMModel"],
            "valueType": "string",
            "value": "scripted-chat",
        },
        {"key": "userChatInput", "label": "User question", "renderTypeList": ["reference", "textarea"]}
        | {"valueType": "string", "required": True},
    ],
    [{"id": "answerText", "key": "answerText", "valueType": "string", "type": "static"}],
)


PHONE = {"width": 390, "height": 844}
Box = dict[str, float]


def touch_flow_app(name: str) -> dict[str, Any]:
    """An advanced app with only its start node, for the phone editor to build on."""
    question = {"key": "userChatInput", "label": "User question", "valueType": "string"}
    start = {
        "nodeId": "workflowStartNodeId",
        "flowNodeType": "workflowStart",
        "name": "Start",
        "position": {"x": 0, "y": 0},
        "inputs": [{**question, "renderTypeList": ["reference", "textarea"]}],
        "outputs": [{**question, "id": "userChatInput", "type": "static"}],
    }
    return {"name": name, "type": "advanced", "nodes": [start], "edges": [], "chatConfig": {}}


def _box(page: Any, selector: str) -> Box:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return dict(box)


def _overlap(a: Box, b: Box) -> bool:
    return (
        a["x"] < b["x"] + b["width"] - 0.5
        and b["x"] < a["x"] + a["width"] - 0.5
        and a["y"] < b["y"] + b["height"] - 0.5
        and b["y"] < a["y"] + a["height"] - 0.5
    )


def _inside(inner: Box, outer: Box) -> bool:
    return (
        inner["x"] >= outer["x"] - 0.5
        and inner["y"] >= outer["y"] - 0.5
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
    )


def flow_node(kind: str) -> str:
    return f".react-flow__node:has([data-node-type={kind}])"


def check_phone_layout(page: Any, visible: list[str]) -> None:
    """The nodes named in ``visible`` lie wholly in the canvas, clear of the palette and the sheet; the
    palette's labels are whole; the sheet is at most 60 % of the screen; the page does not scroll sideways."""
    page.wait_for_timeout(250)  # the view is fitted 60 ms after a panel opens or closes
    canvas = _box(page, ".wf-canvas")
    covers = [sel for sel in ("[data-testid=palette]", "[data-testid=sheet]") if page.locator(sel).count()]
    for selector in visible:
        node = _box(page, selector)
        assert _inside(node, canvas), (selector, node, canvas)
        for cover in covers:
            assert not _overlap(node, _box(page, cover)), (selector, cover)
    if page.locator("[data-testid=sheet]").count():
        assert _box(page, "[data-testid=sheet]")["height"] <= 0.6 * PHONE["height"]
    for button in page.locator("[data-testid=palette] button").all():
        assert button.evaluate("b => b.scrollWidth <= b.clientWidth"), button.inner_text()
        box = button.bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"], button.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def _check_handles(page: Any) -> None:
    handles = page.locator(".react-flow__node .react-flow__handle").all()
    assert handles
    for handle in handles:
        box = handle.bounding_box()
        assert box is not None and box["width"] >= 24 and box["height"] >= 24, box


def _tap_connect(page: Any, source: str, target: str) -> None:
    edges = page.locator(".react-flow__edge").count()
    page.tap(f"{source} .react-flow__handle.source")
    page.wait_for_selector("[data-testid=connect-hint]")
    assert page.locator("[data-testid=sheet]").count() == 0  # tapping a handle opens no sheet
    page.tap(f"{target} .react-flow__handle.target")
    page.wait_for_selector("[data-testid=connect-hint]", state="detached")
    assert page.locator(".react-flow__edge").count() == edges + 1


def _add_by_touch(page: Any, kind: str) -> None:
    page.tap("[data-testid=palette-toggle]")
    page.wait_for_selector("[data-testid=palette]")
    check_phone_layout(page, [".react-flow__node"])
    page.tap(f"[data-template={kind}]")
    page.wait_for_selector(f"{flow_node(kind)}.selected")
    page.wait_for_selector("[data-testid=sheet] [data-testid=inspector]")
    assert page.locator("[data-testid=palette]").count() == 0  # closed to make room for the sheet
    check_phone_layout(page, [flow_node(kind)])


def build_by_touch(page: Any, editor_url: str, knowledge_base: str, model: str) -> None:
    """In a touch phone browser signed in: opens the workflow editor of an app holding only its start node
    (``touch_flow_app``) and builds start → knowledge search (on ``knowledge_base``) → AI chat (``model``)
    by touch only — palette taps, the bottom sheet, tap-a-handle-then-another connections — checking the
    layout and the touch targets at each step. Leaves the three nodes connected, nothing selected."""
    page.goto(editor_url)
    page.wait_for_selector(".react-flow__node [data-node-type=workflowStart]")
    assert page.locator("[data-testid=palette]").count() == 0  # a phone opens with the palette closed
    assert page.locator("[data-testid=sheet]").count() == 0
    check_phone_layout(page, [flow_node("workflowStart")])

    _add_by_touch(page, "datasetSearchNode")
    page.tap("[data-testid=sheet-handle]")  # the sheet drops to its title row, and back
    page.wait_for_selector("[data-testid=sheet].low")
    assert _box(page, "[data-testid=sheet]")["height"] < 100
    page.tap("[data-testid=sheet-handle]")
    page.wait_for_selector("[data-testid=sheet]:not(.low)")
    page.tap(f"[data-testid=inspector] label:has-text('{knowledge_base}') input")
    assert page.locator(f"[data-testid=inspector] label:has-text('{knowledge_base}') input").is_checked()
    page.tap("[data-testid=inspector] button[aria-label=Close]")
    page.wait_for_selector("[data-testid=sheet]", state="detached")

    _add_by_touch(page, "chatNode")
    page.wait_for_selector("[data-testid=inspector] select[name=input-model]:not([disabled])")
    page.select_option("[data-testid=inspector] select[name=input-model]", model)
    page.tap("[data-testid=inspector] button[aria-label=Close]")
    page.wait_for_selector("[data-testid=sheet]", state="detached")
    everything = [flow_node("workflowStart"), flow_node("datasetSearchNode"), flow_node("chatNode")]
    check_phone_layout(page, everything)
    _check_handles(page)

    _tap_connect(page, flow_node("workflowStart"), flow_node("datasetSearchNode"))
    page.tap(f"{flow_node('datasetSearchNode')} .react-flow__handle.source")  # a tap on the canvas cancels
    page.wait_for_selector("[data-testid=connect-hint]")
    page.tap(".react-flow__pane", position={"x": 20, "y": 20})
    page.wait_for_selector("[data-testid=connect-hint]", state="detached")
    _tap_connect(page, flow_node("datasetSearchNode"), flow_node("chatNode"))
    check_phone_layout(page, everything)


def quote_search_results_in_the_sheet(page: Any) -> None:
    """After ``build_by_touch``: the AI chat node opened in the bottom sheet, its quotes set to the knowledge
    search's output."""
    page.tap(f"{flow_node('chatNode')} .wf-node-head")
    page.wait_for_selector("[data-testid=sheet] [data-testid=inspector]")
    check_phone_layout(page, [flow_node("chatNode")])
    quotes = page.locator("[data-testid=ref-quoteQA] option[value$='|quoteQA']")  # search › Quotes
    page.select_option("[data-testid=ref-quoteQA]", value=quotes.get_attribute("value"))


def open_node(page: Any, node: str) -> None:
    """Click the head of the workflow node ``node`` (a selector) and wait for its inspector. A click whose
    inspector did not open in 20 s is told apart from a slow page (what the canvas and the inspector
    show), then repeated once: a CI run under load once saw the model select of the opened node never
    appear, and which of the two waits failed was not known."""
    head = f"{node} .wf-node-head"
    page.click(head)
    try:
        page.wait_for_selector("[data-testid=inspector]", timeout=20_000)
        return
    except Exception:  # noqa: BLE001 - Playwright's TimeoutError; the state is printed, the click repeated
        selected = page.locator(".react-flow__node.selected").count()
        print(f"open_node: no inspector 20 s after a click on {head} ({selected} node(s) selected); again")
    page.click(head)
    page.wait_for_selector("[data-testid=inspector]")


def wait_for_inspector_field(page: Any, selector: str, timeout_ms: int = 120_000) -> None:
    """Wait for ``selector`` in the open inspector; when it does not come, fail saying what the inspector
    shows and how the console's model list request went (the field waited for is often a model select)."""
    try:
        page.wait_for_selector(f"[data-testid=inspector] {selector}", timeout=timeout_ms)
    except Exception as error:  # noqa: BLE001 - re-raised with what the page showed
        inspector = page.locator("[data-testid=inspector]")
        shown = inspector.first.inner_html()[:2000] if inspector.count() else "(no inspector)"
        requests = page.evaluate(
            "JSON.stringify(performance.getEntriesByType('resource').filter(e => e.name.includes('/api/'))"
            ".map(e => [e.name, Math.round(e.duration), e.responseStatus]))"
        )
        shows = f"inspector {shown!r}; requests {requests}"
        raise AssertionError(f"{selector} did not appear: {shows}") from error
