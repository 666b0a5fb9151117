"""``GET /v1/models`` and ``/api/v1/models`` (issue 31): OpenAI clients that list models before chatting
get the chat models in OpenAI's shape, with the chat route's authentication."""

from __future__ import annotations

import httpx
import openai
import pytest
from chat_support import MODEL, ChatServer, simple_app_body
from openai.types import Model

from fathom.testing import ScriptedOpenAIServer, text_turn


def sdk(server: ChatServer, key: str, prefix: str = "/api/v1") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.base_url}{prefix}", api_key=key, max_retries=0)


@pytest.mark.parametrize("prefix", ["/api/v1", "/v1"])
def test_the_sdk_lists_the_chat_model_then_chats_with_it(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, prefix: str
) -> None:
    client = sdk(chat_server, chat_server.admin_key, prefix)
    models = list(client.models.list())
    assert [m.id for m in models] == [MODEL]
    assert all(isinstance(m, Model) and m.object == "model" and m.owned_by == "fathom" for m in models)
    assert models[0].created > 0

    app_key = chat_server.app_key(chat_server.create_app(simple_app_body()))
    scripted.set_script([text_turn("Hello from the listed model.")])
    reply = sdk(chat_server, app_key).chat.completions.create(
        model=models[0].id, messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.choices[0].message.content == "Hello from the listed model."


def test_a_key_limited_to_one_app_may_list_what_it_chats_with(chat_server: ChatServer) -> None:
    app_key = chat_server.app_key(chat_server.create_app(simple_app_body()))
    assert [m.id for m in sdk(chat_server, app_key).models.list()] == [MODEL]


def test_the_raw_answer_is_openais_list(chat_server: ChatServer) -> None:
    with chat_server.client() as client:
        body = client.get("/v1/models").json()
    assert set(body) == {"object", "data"} and body["object"] == "list"
    assert set(body["data"][0]) == {"id", "object", "created", "owned_by"}


def test_without_a_valid_key_the_sdk_gets_an_authentication_error(chat_server: ChatServer) -> None:
    with pytest.raises(openai.AuthenticationError):
        sdk(chat_server, "fathom-unknownkey").models.list()
    answer = httpx.get(f"{chat_server.base_url}/api/v1/models")
    assert answer.status_code == 401
    assert answer.json()["statusText"] == "unAuthorization"


def test_a_server_without_a_chat_model_lists_none(bare_server: ChatServer) -> None:
    assert list(sdk(bare_server, bare_server.admin_key).models.list()) == []
