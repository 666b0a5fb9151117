"""Team tool sets on the product path, on SQLite and PostgreSQL: an MCP server registered once through
``/api/core/app/mcpTools`` (stdio and streamable HTTP on loopback, served by the ``mcp`` package's own
``MCPServer``) or an OpenAPI API through ``/api/core/app/httpTools``, picked by a workflow Tool Call node,
an Agent node and a simple app, and called by the scripted model through ``/api/v1/chat/completions``.
Credentials stay in the secrets store: no route returns them, and the servers only answer when the stored
token is sent. Another team's tool set is not found."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_support import MODEL, ChatServer, free_port, start_chat_server
from live_support import backend_database_url

from fathom.config import Settings
from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn
from fathom.testing._http import BackgroundHttpServer, HttpRequest, HttpResponse
from workflow_json import START_TEXT, edge, tool_caller, tool_edge

SERVER = Path(__file__).with_name("mcp_orders_server.py")
TOKEN = "tok-secret-7f3a9c21"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def tools_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, scripted: ScriptedOpenAIServer
) -> Iterator[ChatServer]:
    database_url = backend_database_url(request, "toolsets")
    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path_factory.mktemp("toolsets") / "data",
        port=free_port(),
        workers=0,
        openai_base_url=scripted.base_url,
        chat_model=MODEL,
        egress_allow_cidrs=["127.0.0.1/32"],
        mcp_stdio_commands=[sys.executable],
    )
    yield from start_chat_server(settings, scripted)


@pytest.fixture(scope="module")
def http_mcp() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", TOKEN],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


def _post(server: ChatServer, path: str, body: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    """The JSON reply, with the HTTP status added as ``status``."""
    with server.client(key) as client:
        response = client.post(path, json=body)
    reply: dict[str, Any] = response.json()
    return {**reply, "status": response.status_code}


def register_stdio(server: ChatServer) -> str:
    body = {"name": "Orders (stdio)", "command": sys.executable, "args": [str(SERVER), "stdio"]}
    reply = _post(server, "/api/core/app/mcpTools/create", body)
    assert reply["code"] == 200, reply
    return str(reply["data"])


def register_http(server: ChatServer, url: str) -> str:
    body = {"name": "Orders (http)", "url": url, "headerSecret": {"Bearer": {"value": TOKEN}}}
    reply = _post(server, "/api/core/app/mcpTools/create", body)
    assert reply["code"] == 200, reply
    return str(reply["data"])


def tool_call_workflow(set_id: str, caller_type: str = "tools") -> dict[str, Any]:
    caller = tool_caller(caller_type, MODEL)
    tool_set = {
        "nodeId": "orders",
        "name": "Orders",
        "flowNodeType": "toolSet",
        "toolConfig": {"mcpToolSet": {"toolId": f"mcp-{set_id}"}},
        "inputs": [],
        "outputs": [],
    }
    return {
        "nodes": [START_TEXT, caller, tool_set],
        "edges": [edge("start", "caller"), tool_edge("caller", "orders")],
    }


def ask(server: ChatServer, app_id: str, question: str = "Where is order A-17?") -> dict[str, Any]:
    body = {
        "appId": app_id,
        "chatId": f"c-{app_id}",
        "detail": True,
        "messages": [{"role": "user", "content": question}],
    }
    return _post(server, "/api/v1/chat/completions", body)


def answer(reply: dict[str, Any]) -> str:
    content = reply["choices"][0]["message"]["content"]
    if isinstance(content, str):
        return content
    return "".join(item["text"]["content"] for item in content if item["type"] == "text")


def test_stdio_mcp_tool_set_is_offered_to_a_tool_call_node_and_runs(
    tools_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    set_id = register_stdio(tools_server)
    app_id = tools_server.create_app({"name": "Support", "type": "advanced", **tool_call_workflow(set_id)})
    scripted.clear()
    scripted.set_script([tool_call_turn([("lookup_order", {"order_id": "A-17"})]), text_turn("It shipped.")])

    reply = ask(tools_server, app_id)

    assert answer(reply) == "It shipped."
    first, second = scripted.chat_requests[-2:]
    offered = {tool["function"]["name"]: tool["function"] for tool in first["tools"]}
    assert list(offered) == ["lookup_order"]
    assert offered["lookup_order"]["description"] == "Look an order up by its id."
    assert offered["lookup_order"]["parameters"]["required"] == ["order_id"]
    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_message["content"] == "order A-17: shipped on 2024-05-01"


def test_http_mcp_tool_set_sends_the_stored_secret_and_never_shows_it(
    tools_server: ChatServer, scripted: ScriptedOpenAIServer, http_mcp: str
) -> None:
    set_id = register_http(tools_server, http_mcp)
    with tools_server.client() as client:
        detail = client.get("/api/core/app/detail", params={"appId": set_id}).json()["data"]
        children = client.get("/api/core/app/mcpTools/getChildren", params={"id": set_id}).json()["data"]
        listed = client.get("/api/core/app/list").json()["data"]
    shown = json.dumps([detail, children])
    assert TOKEN not in shown and "v1:" not in shown  # neither the value nor its ciphertext
    assert children["toolSet"]["headerSecret"]["Bearer"]["masked"] == "****9c21"
    assert children["children"][0]["toolConfig"] == {"mcpTool": {"toolId": f"mcp-{set_id}/lookup_order"}}
    assert children["children"][0]["configStatus"] == {"needConfig": False, "status": "noConfig"}
    assert any(item["_id"] == set_id and item["type"] == "toolSet" for item in listed)

    async def stored(platform: Platform) -> dict[str, Any]:
        app = await platform.apps.get_app(tools_server.boot.team_id, set_id)
        return app.draft

    assert TOKEN not in json.dumps(tools_server.run(stored))  # encrypted at rest

    simple = tools_server.create_app(
        {
            "name": "Simple orders",
            "type": "simple",
            "simpleConfig": {"model": MODEL, "tools": [{"toolSetId": set_id}]},
        }
    )
    scripted.clear()
    scripted.set_script([tool_call_turn([("lookup_order", {"order_id": "B-2"})]), text_turn("B-2 shipped.")])
    reply = ask(tools_server, simple)
    assert answer(reply) == "B-2 shipped."
    tool_message = next(m for m in scripted.chat_requests[-1]["messages"] if m["role"] == "tool")
    assert tool_message["content"] == "order B-2: shipped on 2024-05-01"


def test_agent_node_picks_a_team_tool_set(tools_server: ChatServer, scripted: ScriptedOpenAIServer) -> None:
    set_id = register_stdio(tools_server)
    app_id = tools_server.create_app(
        {"name": "Agent", "type": "advanced", **tool_call_workflow(set_id, "agent")}
    )
    scripted.clear()
    scripted.set_script([tool_call_turn([("lookup_order", {"order_id": "C-3"})]), text_turn("C-3 shipped.")])
    reply = ask(tools_server, app_id)
    assert answer(reply) == "C-3 shipped."
    offered = [t["function"]["name"] for t in scripted.chat_requests[0]["tools"]]
    assert "lookup_order" in offered
    tool_message = next(m for m in scripted.chat_requests[-1]["messages"] if m["role"] == "tool")
    assert tool_message["content"] == "order C-3: shipped on 2024-05-01"


def test_get_tools_and_run_tool_try_a_server_before_and_after_registering(tools_server: ChatServer) -> None:
    stdio = {"command": sys.executable, "args": [str(SERVER), "stdio"]}
    listed = _post(tools_server, "/api/core/app/mcpTools/getTools", stdio)
    assert [tool["name"] for tool in listed["data"]] == ["lookup_order"]
    set_id = register_stdio(tools_server)
    ran = _post(
        tools_server,
        "/api/core/app/mcpTools/runTool",
        {"appId": set_id, "toolName": "lookup_order", "params": {"order_id": "D-4"}},
    )
    assert ran["data"] == "order D-4: shipped on 2024-05-01"
    missing = _post(
        tools_server,
        "/api/core/app/mcpTools/runTool",
        {"appId": set_id, "toolName": "lookup_order", "params": {}},
    )
    assert missing["status"] == 400 and "order_id" in missing["message"]


def test_run_tool_calls_an_unsaved_server_and_a_bad_tool_list_beside_a_server_is_refused(
    tools_server: ChatServer,
) -> None:
    stdio = {"command": sys.executable, "args": [str(SERVER), "stdio"]}
    ran = _post(
        tools_server,
        "/api/core/app/mcpTools/runTool",
        {**stdio, "toolName": " lookup_order ", "params": {"order_id": "D-5"}},
    )
    assert ran["data"] == "order D-5: shipped on 2024-05-01"
    for path in ("getTools", "runTool"):  # neither declares toolList, both read one sent all the same
        refused = _post(
            tools_server,
            f"/api/core/app/mcpTools/{path}",
            {**stdio, "toolName": "lookup_order", "toolList": "lookup_order"},
        )
        assert refused["status"] == 400 and refused["message"].startswith("toolList: must be a list"), refused


def test_stdio_commands_the_operator_did_not_allow_are_refused(tools_server: ChatServer) -> None:
    reply = _post(
        tools_server,
        "/api/core/app/mcpTools/create",
        {"name": "Shell", "command": "/bin/sh", "args": ["-c", "id"]},
    )
    assert reply["status"] == 400
    assert "command" in reply["message"] and "FATHOM_MCP_STDIO_COMMANDS" in reply["message"]
    both = _post(
        tools_server,
        "/api/core/app/mcpTools/create",
        {"name": "Both", "url": "http://127.0.0.1:1/mcp", "command": sys.executable},
    )
    assert both["status"] == 400 and both["message"].startswith("url:")


def test_another_teams_tool_set_is_not_found(
    tools_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    set_id = register_stdio(tools_server)

    async def other_team(platform: Platform) -> str:
        team = await platform.teams.create_team("Elsewhere")
        owner = await platform.teams.add_member(team.id, "eve", "owner")
        _, key = await platform.api_keys.create_key(team.id, owner.id)
        return key

    key = tools_server.run(other_team)
    children = _post(tools_server, "/api/core/app/mcpTools/getChildren", {"id": set_id}, key=key)
    assert children["status"] == 404
    ran = _post(
        tools_server,
        "/api/core/app/mcpTools/runTool",
        {"appId": set_id, "toolName": "lookup_order", "params": {"order_id": "x"}},
        key=key,
    )
    assert ran["status"] == 404

    with tools_server.client(key) as client:
        created = client.post(
            "/api/core/app/create", json={"name": "Thief", "type": "advanced", **tool_call_workflow(set_id)}
        ).json()
    scripted.clear()
    scripted.set_script([text_turn("no tools")])
    body = {
        "appId": created["data"],
        "chatId": "thief",
        "detail": True,
        "messages": [{"role": "user", "content": "hi"}],
    }
    reply = _post(tools_server, "/api/v1/chat/completions", body, key=key)
    assert f"Tool set {set_id} not found" in json.dumps(reply)
    assert all(not request.get("tools") for request in scripted.chat_requests)


def test_a_published_app_is_a_tool_of_a_simple_app(
    tools_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    child = tools_server.create_app(
        {"name": "Shipping FAQ", "type": "simple", "simpleConfig": {"model": MODEL, "systemPrompt": "FAQ"}}
    )
    tool = {"appId": child, "name": "Shipping FAQ", "description": "Answers shipping questions"}
    parent = tools_server.create_app(
        {"name": "Front desk", "type": "simple", "simpleConfig": {"model": MODEL, "tools": [tool]}}
    )
    scripted.clear()
    scripted.set_script(
        [
            tool_call_turn([(f"app{child}", {"userChatInput": "How long does shipping take?"})]),
            text_turn("Two working days."),
            text_turn("Shipping takes two working days."),
        ]
    )
    reply = ask(tools_server, parent, "How long does shipping take?")
    assert answer(reply) == "Shipping takes two working days."
    first, child_request, last = scripted.chat_requests[-3:]
    offered = {t["function"]["name"]: t["function"] for t in first["tools"]}
    assert offered[f"app{child}"]["description"] == "Answers shipping questions"
    assert list(offered[f"app{child}"]["parameters"]["properties"]) == ["userChatInput"]
    assert child_request["messages"][-1] == {"role": "user", "content": "How long does shipping take?"}
    tool_message = next(m for m in last["messages"] if m["role"] == "tool")
    assert "Two working days." in tool_message["content"]


API_KEY = "key-4b1d-7e0c-99aa"
ORDERS_API = {
    "openapi": "3.0.0",
    "info": {"title": "Orders", "version": "1"},
    "paths": {
        "/orders/{orderId}": {
            "get": {
                "operationId": "getOrder",
                "description": "Read one order",
                "parameters": [
                    {"name": "orderId", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
            }
        }
    },
}


@pytest.fixture(scope="module")
def orders_api() -> Iterator[tuple[str, list[HttpRequest]]]:
    seen: list[HttpRequest] = []

    async def handle(request: HttpRequest) -> HttpResponse:
        seen.append(request)
        if request.headers.get("x-api-key") != API_KEY:
            return HttpResponse(401, {"content-type": "text/plain"}, b"no key")
        order = request.path.rsplit("/", 1)[-1]
        body = json.dumps({"id": order, "status": "packed"}).encode()
        return HttpResponse(200, {"content-type": "application/json"}, body)

    server = BackgroundHttpServer(handle)
    server.start()
    yield f"http://127.0.0.1:{server.port}", seen
    server.stop()


def test_http_tool_set_tool_node_from_get_children_runs_under_a_tool_call_node(
    tools_server: ChatServer, scripted: ScriptedOpenAIServer, orders_api: tuple[str, list[HttpRequest]]
) -> None:
    base_url, seen = orders_api
    created = _post(
        tools_server, "/api/core/app/httpTools/create", {"name": "Orders API", "createType": "batch"}
    )
    set_id = created["data"]
    update = {
        "appId": set_id,
        "baseUrl": base_url,
        "apiSchemaStr": json.dumps(ORDERS_API),
        "customHeaders": "{}",
        "headerSecret": {"X-Api-Key": {"value": API_KEY}},
    }
    assert _post(tools_server, "/api/core/app/httpTools/update", update)["code"] == 200
    with tools_server.client() as client:
        children = client.get("/api/core/app/httpTools/getChildren", params={"id": set_id}).json()["data"]
    assert API_KEY not in json.dumps(children)
    node = children["children"][0]
    assert node["toolConfig"] == {"httpTool": {"toolId": f"http-{set_id}/getOrder"}}

    workflow = tool_call_workflow(set_id)
    workflow["nodes"][2] = node
    workflow["edges"][1]["target"] = node["nodeId"]
    app_id = tools_server.create_app({"name": "Orders desk", "type": "advanced", **workflow})
    scripted.clear()
    scripted.set_script([tool_call_turn([(node["nodeId"], {"orderId": "E-5"})]), text_turn("E-5 is packed.")])

    reply = ask(tools_server, app_id)

    assert answer(reply) == "E-5 is packed."
    offered = scripted.chat_requests[-2]["tools"][0]["function"]
    assert offered["parameters"]["required"] == ["orderId"]
    tool_message = next(m for m in scripted.chat_requests[-1]["messages"] if m["role"] == "tool")
    assert json.loads(tool_message["content"]) == {"id": "E-5", "status": "packed"}
    assert seen[-1].path == "/orders/E-5" and seen[-1].headers["x-api-key"] == API_KEY


def test_app_detail_flags_a_fixed_value_that_breaks_the_tools_schema(tools_server: ChatServer) -> None:
    set_id = register_stdio(tools_server)
    with tools_server.client() as client:
        children = client.get("/api/core/app/mcpTools/getChildren", params={"id": set_id}).json()["data"]
    node = children["children"][0]
    order_id = next(i for i in node["inputs"] if i["key"] == "order_id")
    order_id.update({"selectedType": "input", "value": 42})  # the schema says string
    workflow = tool_call_workflow(set_id)
    workflow["nodes"][2] = node
    workflow["edges"][1]["target"] = node["nodeId"]
    app_id = tools_server.create_app({"name": "Fixed order", "type": "advanced", **workflow})
    with tools_server.client() as client:
        detail = client.get("/api/core/app/detail", params={"appId": app_id}).json()["data"]
    assert detail["toolConfigStatus"][node["nodeId"]] == {
        "needConfig": False,
        "status": "configured",
        "valid": True,
        "invalidInputs": ["order_id"],
    }


def test_a_header_secret_this_server_did_not_seal_is_refused(tools_server: ChatServer) -> None:
    body = {
        "name": "Forged",
        "command": sys.executable,
        "args": [str(SERVER), "stdio"],
        "headerSecret": {"Bearer": {"secret": "v1:not-ours", "value": ""}},
    }
    reply = _post(tools_server, "/api/core/app/mcpTools/create", body)
    assert reply["status"] == 400 and reply["message"].startswith("headerSecret.Bearer.secret:")
