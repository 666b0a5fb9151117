"""Console details a first hour trips on (issue 31 item 10), each in Chromium: the share link's name
field is wide enough to read; links made through the API get the console's per-visitor rate (60 a
minute); simple-app cards have an Edit link; two knowledge bases with the same name are told apart in
the app form; Enter runs the editor's test panel; the sign-in page asks nothing that answers 401; the
widget snippet and invitation links use ``FATHOM_PUBLIC_URL``. Each at desktop size in English and on a
phone in Chinese."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from console_support import RequestsInFlight, data, sign_in

from fathom.config import Settings

PUBLIC_URL = "https://chat.example.com"


@pytest.fixture(scope="module")
def public_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A server announcing a public address other than the one the browser uses."""
    from live_support import free_port, start_live_server

    root = tmp_path_factory.mktemp("details")
    settings = Settings(data_dir=root / "data", port=free_port(), workers=0, public_url=PUBLIC_URL)
    yield from start_live_server(settings)


def simple_app(server: Any, name: str) -> str:
    with server.client(server.admin_key) as client:
        body = {"name": name, "type": "simple", "simpleConfig": {"systemPrompt": "Be brief."}}
        return str(data(client.post("/api/core/app/create", json=body)))


VIEWS = {  # desktop in English, a phone in Chinese
    "desktop-en": ({"width": 1366, "height": 900}, "en-US"),
    "phone-zh": ({"width": 390, "height": 844}, "zh-CN"),
}
WORDS = {
    "en-US": {"sign_in": "Sign in", "run": "Run", "sign_out": "Sign out", "apps": "Apps"}
    | {"simple_app": "Simple app", "invite": "Create invitation link"},
    "zh-CN": {"sign_in": "登录", "run": "运行", "sign_out": "退出登录", "apps": "应用"}
    | {"simple_app": "简易应用", "invite": "生成邀请链接"},
}


def _page(browser: Any, view: str) -> Any:
    viewport, locale = VIEWS[view]
    phone = viewport["width"] < 500
    return browser.new_page(viewport=viewport, locale=locale, is_mobile=phone, has_touch=phone)


SHARE_WORDS = {  # the desktop browser reads English, the phone Chinese
    "en-US": {"sign_in": "Sign in", "create": "Create link", "rate": "60 requests/min per visitor"},
    "zh-CN": {"sign_in": "登录", "create": "创建链接", "rate": "每位访客每分钟 60 次"},
}


@pytest.mark.parametrize(
    ("width", "locale"), [(1366, "en-US"), (390, "zh-CN")], ids=["desktop-en", "phone-zh"]
)
def test_share_links_name_is_readable_api_links_get_the_console_rate_and_snippets_use_the_public_url(
    public_server: Any, browser: Any, width: int, locale: str
) -> None:
    words = SHARE_WORDS[locale]
    server = public_server
    app_id = simple_app(server, f"Shared {width}")
    with server.client(server.admin_key) as client:  # no limit given: the same default as the console's
        data(
            client.post(
                "/api/support/outLink/create", json={"appId": app_id, "type": "share", "name": "By API"}
            )
        )
    page = browser.new_page(viewport={"width": width, "height": 900}, locale=locale)
    try:
        page.goto(server.base_url + "/")
        page.fill("input[name=apiKey]", server.admin_key)
        page.click(f"button:has-text('{words['sign_in']}')")
        page.wait_for_selector("nav.sidebar")
        page.goto(f"{server.base_url}/apps/{app_id}")
        name = page.locator("input[name=shareName]")
        assert name.bounding_box()["width"] >= 200  # was ~50 px ("Link i")
        assert page.input_value("input[name=shareQpm]") == "60"
        name.fill("Link in the console")
        page.click(f"button:has-text('{words['create']}')")
        page.wait_for_selector("[data-testid=share-link]:has-text('Link in the console')")
        rates = page.locator("[data-testid=share-link] > .row.small > .muted").all_inner_texts()
        assert rates == [words["rate"], words["rate"]]  # the console's link's and the API's
        script = page.input_value("[data-testid=share-script-snippet] >> nth=0")
        assert script.startswith(f'<script src="{PUBLIC_URL}/js/widget.js" data-share-id="')
        assert page.input_value("[data-testid=share-link-url] >> nth=0").startswith(
            f"{PUBLIC_URL}/chat/share?shareId="
        )
        assert f"{PUBLIC_URL}/chat/share?shareId=" in page.input_value(
            "[data-testid=share-iframe-snippet] >> nth=0"
        )
    finally:
        page.close()


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_simple_app_cards_have_an_edit_link_and_same_named_knowledge_bases_differ(
    public_server: Any, browser: Any, view: str
) -> None:
    server = public_server
    name = f"Card with edit {view}"
    app_id = simple_app(server, name)
    with server.client(server.admin_key) as client:
        first = data(
            client.post(
                "/api/core/dataset/create", json={"name": f"Handbook {view}", "intro": "HR rules 2025"}
            )
        )
        second = data(client.post("/api/core/dataset/create", json={"name": f"Handbook {view}"}))
    words = WORDS[VIEWS[view][1]]
    page = _page(browser, view)
    try:
        page.goto(server.base_url + "/")
        page.fill("input[name=apiKey]", server.admin_key)
        page.click(f"button:has-text('{words['sign_in']}')")
        page.wait_for_selector("nav.sidebar")
        if view.startswith("phone"):
            page.click("button[aria-label=Menu]")
        page.click(f"nav >> text={words['apps']}")
        card = page.locator(f".tile[data-app='{name}']")
        card.locator("[data-testid=edit-app]").click()
        page.wait_for_url(f"**/apps/{app_id}")
        page.wait_for_selector(f"h2:has-text('{words['simple_app']}')")
        labels = {
            kb: " ".join(page.locator(f"label:has(input[data-kb-id='{kb}'])").inner_text().split())
            for kb in (first, second)
        }
        assert labels[first] == f"Handbook {view} (HR rules 2025)"
        assert labels[second] == f"Handbook {view} (id …{second[-6:]})"
    finally:
        page.close()


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_enter_runs_the_editors_test_panel(public_server: Any, browser: Any, view: str) -> None:
    server = public_server
    words = WORDS[VIEWS[view][1]]
    workflow = {
        "nodes": [
            {
                "nodeId": "workflowStartNodeId",
                "name": "Start",
                "flowNodeType": "workflowStart",
                "inputs": [],
                "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string"}],
            },
            {
                "nodeId": "reply",
                "name": "Reply",
                "flowNodeType": "answerNode",
                "inputs": [
                    {
                        "key": "text",
                        "renderTypeList": ["textarea", "reference"],
                        "valueType": "any",
                        "value": "Echo: {{$workflowStartNodeId.userChatInput$}}",
                    }
                ],
                "outputs": [],
            },
        ],
        "edges": [
            {
                "source": "workflowStartNodeId",
                "target": "reply",
                "sourceHandle": "workflowStartNodeId-source-right",
                "targetHandle": "reply-target-left",
            }
        ],
    }
    with server.client(server.admin_key) as client:
        app_id = data(
            client.post("/api/core/app/create", json={"name": "Echo", "type": "advanced", **workflow})
        )
    page = _page(browser, view)
    try:
        page.goto(server.base_url + "/")
        page.fill("input[name=apiKey]", server.admin_key)
        page.click(f"button:has-text('{words['sign_in']}')")
        page.wait_for_selector("nav.sidebar")
        page.goto(f"{server.base_url}/apps/{app_id}/workflow")
        page.wait_for_selector(".react-flow__node [data-node-type=answerNode]")
        page.click(f"button:has-text('{words['run']}')")
        page.fill("textarea[name=runQuery]", "first line")
        page.press("textarea[name=runQuery]", "Shift+Enter")  # a new line, not a run
        page.type("textarea[name=runQuery]", "second line")
        assert page.locator("[data-testid=run-log]").count() == 0
        page.press("textarea[name=runQuery]", "Enter")
        answer = page.locator("[data-testid=run-panel] .chunk:has-text('Echo: first line')").last
        answer.wait_for()
        assert "second line" in answer.inner_text()  # the whole question ran, both lines
    finally:
        page.close()


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_the_sign_in_page_asks_nothing_that_answers_401(
    public_server: Any, browser: Any, screenshots: Path, view: str
) -> None:
    server = public_server
    words = WORDS[VIEWS[view][1]]
    page = _page(browser, view)
    errors: list[str] = []
    refused: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("response", lambda response: refused.append(response.url) if response.status == 401 else None)
    try:
        for _ in range(2):  # first visit and a reload
            page.goto(server.base_url + "/")
            page.wait_for_selector("input[name=password]")
            page.wait_for_load_state("networkidle")
        assert errors == [] and refused == []
        # a password session still survives a reload (the console asks only when it has signed in)
        password = server.boot.root_password
        assert password
        page.fill("input[name=username]", "root")
        page.fill("input[name=password]", password)
        page.click(f"button:has-text('{words['sign_in']}')")
        page.wait_for_selector("nav.sidebar")
        page.reload()
        page.wait_for_selector("nav.sidebar")
        if view.startswith("phone"):
            page.click("button[aria-label=Menu]")
        page.click(f"button:has-text('{words['sign_out']}')")
        page.wait_for_selector("input[name=password]")
        page.reload()
        page.wait_for_selector("input[name=password]")
        page.wait_for_load_state("networkidle")
        assert errors == [] and refused == []
    finally:
        page.close()


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_invitation_links_use_the_public_url(public_server: Any, browser: Any, view: str) -> None:
    server = public_server
    words = WORDS[VIEWS[view][1]]
    page = _page(browser, view)
    try:
        sign_in(page, server.base_url, server.admin_key, words["sign_in"])
        page.goto(f"{server.base_url}/members")
        page.select_option("select[name=inviteRole]", "member")
        page.click(f"button:has-text('{words['invite']}')")
        link = page.locator("[data-testid=invite-link] code").inner_text().strip()
        assert link.startswith(f"{PUBLIC_URL}/invite/"), link
    finally:
        page.close()


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_signing_out_waits_for_the_pages_requests_so_none_is_answered_401(
    public_server: Any, browser: Any, view: str
) -> None:
    """A page's request still on its way when Sign out is clicked (a slow server) is answered before the
    session ends, and its answer starts no other request (the chat page's list of apps would load the first
    app's histories): sent after the session ended, either would come back 401 (a console error) on a page
    that is going away. Requests the page sends after the held one is let go are themselves held until the
    sign-out has finished, so a follow-up request is answered 401 every time, not only on a slow machine."""
    server = public_server
    words = WORDS[VIEWS[view][1]]
    page = _page(browser, view)
    errors: list[str] = []
    refused: list[str] = []
    held: list[Any] = []
    late: list[Any] = []
    let_go = False
    simple_app(server, f"Follow-up {view}")  # with an app, the chat page asks for its histories
    requests = RequestsInFlight(page)
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("response", lambda response: refused.append(response.url) if response.status == 401 else None)
    try:
        page.goto(server.base_url + "/")
        page.fill("input[name=username]", "root")
        page.fill("input[name=password]", server.boot.root_password)
        page.click(f"button:has-text('{words['sign_in']}')")
        page.wait_for_selector("nav.sidebar")
        requests.wait_quiet()  # a request of this page held below would not be the reloaded page's

        def hold(route: Any) -> None:  # the first of the page's own requests waits until let go below
            if "/account/" in route.request.url:
                route.continue_()
            elif not held:
                held.append(route)
            elif let_go:
                late.append(route)
            else:
                route.continue_()

        page.route("**/api/**", hold)
        page.reload()
        page.wait_for_selector("nav.sidebar")
        deadline = 200
        while not held and deadline:
            page.wait_for_timeout(50)
            deadline -= 1
        assert held, "the signed-in page sent no request to hold"
        if view.startswith("phone"):
            page.click("button[aria-label=Menu]")
        page.click(f"button:has-text('{words['sign_out']}')")
        page.wait_for_timeout(500)  # the sign-out is waiting: the session must still be there for it
        assert page.locator("input[name=password]").count() == 0
        let_go = True
        held[0].continue_()
        page.wait_for_selector("input[name=password]")
        for route in late:
            route.continue_()
        page.wait_for_load_state("networkidle")
        page.unroute("**/api/**")
        page.reload()
        page.wait_for_selector("input[name=password]")
        page.wait_for_load_state("networkidle")
        assert errors == [] and refused == [], (errors, refused)
    finally:
        page.close()
