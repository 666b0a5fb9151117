"""Issue 13 item 6: a chat variable of type ``password`` is stored encrypted (the secrets module's
``{secret, value}`` object), never answered by the chat or history routes (``chat/init``, records,
node responses, ``newVariables``, ``updateVariables``), never sent to the model unless a node
references it, and masked in the logs; a node that does reference it gets the plain value, also on a
later turn that does not send it again."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from chat_support import MODEL, ChatServer, parse_sse

from fathom.platform import Platform
from fathom.security import SecretMaskingFilter
from fathom.testing import ScriptedOpenAIServer, text_turn
from workflow_json import edge, field, typed_answer, typed_start

TOKEN = "tok-SECRET-4242-abcdef"
DEFAULT = "default-SECRET-7777"


def _app(answer_text: str) -> dict[str, Any]:
    """start -> chat node (prompt never names the token) -> variable update of ``note`` -> answer."""
    start = typed_start()
    chat = {
        "nodeId": "chat",
        "name": "AI",
        "flowNodeType": "chatNode",
        "inputs": [
            field("model", MODEL),
            field("systemPrompt", "Be brief."),
            field("history", 6, "chatHistory"),
            field("userChatInput", ["start", "userChatInput"], render="reference"),
        ],
        "outputs": [{"id": "answerText", "key": "answerText", "valueType": "string", "type": "static"}],
    }
    update = {
        "nodeId": "update",
        "name": "Update",
        "flowNodeType": "variableUpdate",
        "inputs": [
            {
                "key": "updateList",
                "valueType": "any",
                "renderTypeList": ["hidden"],
                "label": "",
                "value": [
                    {
                        "variable": ["VARIABLE_NODE_ID", "note"],
                        "value": ["", "seen"],
                        "valueType": "string",
                        "renderType": "input",
                    }
                ],
            }
        ],
        "outputs": [],
    }
    answer = typed_answer(answer_text)
    variables = [
        {
            "key": "apiToken",
            "label": "API token",
            "type": "password",
            "valueType": "string",
            "required": True,
            "defaultValue": DEFAULT,
        },
        {"key": "note", "label": "Note", "type": "input", "valueType": "string"},
    ]
    return {
        "type": "advanced",
        "nodes": [start, chat, update, answer],
        "edges": [edge("start", "chat"), edge("chat", "update"), edge("update", "answer")],
        "chatConfig": {"variables": variables},
    }


def _ask(server: ChatServer, app_id: str, chat_id: str, *, stream: bool, **variables: Any) -> str:
    body = {
        "appId": app_id,
        "chatId": chat_id,
        "stream": stream,
        "detail": True,
        "variables": variables,
        "messages": [{"role": "user", "content": "hello"}],
    }
    with server.client() as client:
        response = client.post("/api/v1/chat/completions", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return response.text


def _stored_variables(server: ChatServer, app_id: str, chat_id: str) -> dict[str, Any]:
    async def read(platform: Platform) -> dict[str, Any]:
        chat = await platform.chats.get_chat(server.boot.team_id, app_id, chat_id)
        assert chat is not None
        return dict(chat.variables)

    stored: dict[str, Any] = server.run(read)
    return stored


def _every_chat_route(server: ChatServer, app_id: str, chat_id: str) -> str:
    texts = []
    with server.client() as client:
        records = client.post(
            "/api/core/chat/getPaginationRecords", json={"appId": app_id, "chatId": chat_id}
        ).json()
        texts.append(str(records))
        for record in records["data"]["list"]:
            res = client.get(
                "/api/core/chat/getResData",
                params={"appId": app_id, "chatId": chat_id, "dataId": record["dataId"]},
            )
            texts.append(res.text)
        texts.append(client.get("/api/core/chat/init", params={"appId": app_id, "chatId": chat_id}).text)
        texts.append(client.post("/api/core/chat/getHistories", json={"appId": app_id}).text)
    return "\n".join(texts)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_password_variable_is_stored_encrypted_and_never_answered(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, stream: bool
) -> None:
    app_id = chat_server.create_app({"name": f"Vault {stream}", **_app("done")})
    chat_id = f"vault-{stream}"
    scripted.set_script(lambda request: text_turn("ok"))
    before = len(scripted.chat_requests)
    answer = _ask(chat_server, app_id, chat_id, stream=stream, apiToken=TOKEN, note="n")
    assert TOKEN not in answer
    if stream:
        names = {frame.event for frame in parse_sse(answer)}
        assert "updateVariables" in names  # the variable update ran; its event carries no password
    assert all(TOKEN not in str(request) for request in scripted.chat_requests[before:])

    stored = _stored_variables(chat_server, app_id, chat_id)
    sealed = stored["apiToken"]
    assert isinstance(sealed, dict) and sealed["value"] == "" and sealed["secret"].startswith("v1:")
    assert TOKEN not in str(stored) and chat_server.platform.secrets.decrypt(sealed["secret"]) == TOKEN
    assert stored["note"] == "seen"

    routes = _every_chat_route(chat_server, app_id, chat_id)
    assert TOKEN not in routes and "v1:" not in routes
    assert DEFAULT not in routes  # chat/init shows the variable's definition without its default


def test_a_node_that_references_the_password_gets_it_on_later_turns(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app_id = chat_server.create_app({"name": "Vault echo", **_app("length {{apiToken}}")})
    scripted.set_script(lambda request: text_turn("ok"))
    first = _ask(chat_server, app_id, "echo", stream=False, apiToken=TOKEN)
    assert f"length {TOKEN}" in first  # the answer node names it: that node alone shows it
    second = _ask(chat_server, app_id, "echo", stream=False)  # not sent again: read from storage
    assert f"length {TOKEN}" in second
    assert TOKEN not in str(_stored_variables(chat_server, app_id, "echo"))


def test_a_password_variable_is_masked_in_the_logs(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    """Once a chat has stored it, the value is masked by the log filter the server installs."""
    token = "log-only-secret-9876"
    app_id = chat_server.create_app({"name": "Vault log", **_app("done")})
    scripted.set_script(lambda request: text_turn("ok"))
    _ask(chat_server, app_id, "vault-log", stream=False, apiToken=token)
    line = f"calling the API with {token}"
    record = logging.LogRecord("fathom.chat", logging.WARNING, __file__, 1, line, None, None)
    SecretMaskingFilter(chat_server.platform.secrets.redactor).filter(record)
    assert token not in record.getMessage() and "******" in record.getMessage()
