"""``/api/v1|v2/chat/completions`` driven with the real ``openai`` client and a raw SSE reader, on SQLite
and PostgreSQL."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from chat_support import MODEL, ChatServer, answer_text, parse_sse, simple_app_body
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from fathom.testing import ScriptedOpenAIServer, text_turn


@pytest.fixture(scope="module")
def chat_server(chat_server_each_backend: ChatServer) -> ChatServer:
    """The module's own server, on SQLite and on PostgreSQL (issue 30: ``historyPreview``)."""
    return chat_server_each_backend


@pytest.fixture(scope="module")
def app_id(chat_server: ChatServer) -> str:
    return chat_server.create_app(simple_app_body())


@pytest.fixture(scope="module")
def app_key(chat_server: ChatServer, app_id: str) -> str:
    return chat_server.app_key(app_id)


def sdk(chat_server: ChatServer, key: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{chat_server.base_url}/api/v1", api_key=key, max_retries=0)


def test_non_stream_answer_parses_as_sdk_chat_completion(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, app_key: str
) -> None:
    scripted.set_script([text_turn("Makoto Shinkai.")])
    reply = sdk(chat_server, app_key).chat.completions.create(
        model="ignored", messages=[{"role": "user", "content": "Who directed it?"}]
    )
    assert isinstance(reply, ChatCompletion)
    assert reply.choices[0].message.content == "Makoto Shinkai."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.total_tokens == 1  # FastGPT's placeholder
    assert len(reply.id) == 24  # v1: the generated chat id
    sent = scripted.chat_requests[-1]
    assert sent["model"] == MODEL and sent["messages"][0] == {"role": "system", "content": "Be brief."}


def test_stream_chunks_parse_as_sdk_chunks_and_end_with_stop(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, app_key: str
) -> None:
    scripted.set_script([text_turn("Hello there, friend.", text_chunk_chars=3)])
    stream = sdk(chat_server, app_key).chat.completions.create(
        model="x", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    chunks = list(stream)
    assert all(isinstance(c, ChatCompletionChunk) for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == "Hello there, friend."
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])


def post(chat_server: ChatServer, key: str, body: dict[str, Any], version: int = 1) -> Any:
    with chat_server.client(key) as client:
        return client.post(f"/api/v{version}/chat/completions", json=body)


def test_detail_stream_v1_frames_events_and_ends_with_stop_done_flow_responses(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, app_key: str
) -> None:
    scripted.set_script([text_turn("One two three.")])
    body = {"stream": True, "detail": True, "messages": [{"role": "user", "content": "count"}]}
    response = post(chat_server, app_key, body)
    assert response.headers["content-type"] == "text/event-stream;charset=utf-8"
    assert response.headers["cache-control"] == "no-cache, no-transform"
    assert response.headers["x-accel-buffering"] == "no"
    frames = parse_sse(response.text)
    assert all(f.event for f in frames)
    ids = [f.id for f in frames]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    names = [f.event for f in frames]
    assert names[0] == "flowNodeStatus" and frames[0].json() == {"status": "running", "name": "AI 对话"}
    assert "flowNodeResponse" not in names  # v1 sends node details once, at the end
    assert names[-3:] == ["answer", "answer", "flowResponses"]
    stop, done, flow = frames[-3:]
    assert stop.json()["choices"][0] == {
        "delta": {"role": "assistant", "content": None},
        "index": 0,
        "finish_reason": "stop",
    }
    assert done.data == "[DONE]"
    assert stop.data == (  # compact JSON, as FastGPT's JSON.stringify writes it
        '{"id":"","object":"","created":0,"model":"","choices":'
        '[{"delta":{"role":"assistant","content":null},"index":0,"finish_reason":"stop"}]}'
    )
    assert [r["moduleType"] for r in flow.json()] == ["workflowStart", "chatNode"]
    assert "workflowDuration" in names
    assert answer_text(frames) == "One two three."


def test_detail_stream_v2_sends_flow_node_response_and_no_flow_responses(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, app_key: str
) -> None:
    scripted.set_script([text_turn("Fine.")])
    body = {"stream": True, "detail": True, "messages": [{"role": "user", "content": "how?"}]}
    frames = parse_sse(post(chat_server, app_key, body, version=2).text)
    names = [f.event for f in frames]
    assert "flowNodeResponse" in names and "flowResponses" not in names
    assert names[-2:] == ["answer", "answer"] and frames[-1].data == "[DONE]"
    responses = [f.json() for f in frames if f.event == "flowNodeResponse"]
    assert [r["moduleType"] for r in responses] == ["workflowStart", "chatNode"]
    assert responses[-1]["inputTokens"] > 0


def test_plain_stream_has_no_event_lines_and_ends_with_done(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, app_key: str
) -> None:
    scripted.set_script([text_turn("Plain.")])
    body = {"stream": True, "messages": [{"role": "user", "content": "x"}]}
    frames = parse_sse(post(chat_server, app_key, body).text)
    assert all(f.event is None for f in frames)
    assert frames[-1].data == "[DONE]"
    assert frames[-2].json()["choices"][0]["finish_reason"] == "stop"
    assert answer_text(frames) == "Plain."


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        ("hello", "messages is not array"),
        ({"role": "user", "content": "x"}, "messages is not array"),
        ([], "messages is empty"),
        ([{"role": "assistant", "content": "hi"}], "User question is empty"),
        ([{"role": "user", "content": ""}], "User question is empty"),
    ],
)
def test_bad_messages_give_fastgpt_errors_in_json_and_in_stream(
    chat_server: ChatServer, app_key: str, messages: Any, error: str
) -> None:
    response = post(chat_server, app_key, {"messages": messages})
    assert response.status_code == 400  # body code 500 as FastGPT; the request is at fault
    assert response.json() == {"code": 500, "statusText": "", "message": error, "data": None}
    streamed = post(chat_server, app_key, {"messages": messages, "stream": True})
    frames = parse_sse(streamed.text)
    assert [(f.event, f.json()) for f in frames] == [("error", {"message": error})]


def test_account_key_needs_app_id_in_body(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, app_id: str
) -> None:
    key = chat_server.admin_key
    response = post(chat_server, key, {"messages": [{"role": "user", "content": "x"}]})
    assert response.json()["message"] == (
        "Key is error. You need to use the app key rather than the account key."
    )
    scripted.set_script([text_turn("ok")])
    body = {"appId": app_id, "messages": [{"role": "user", "content": "x"}]}
    assert post(chat_server, key, body).json()["choices"][0]["message"]["content"] == "ok"


def test_app_key_cannot_chat_with_another_app(chat_server: ChatServer, app_key: str) -> None:
    other = chat_server.create_app(simple_app_body("Other"))
    response = post(chat_server, app_key, {"appId": other, "messages": [{"role": "user", "content": "x"}]})
    assert response.status_code == 403 and response.json()["statusText"] == "unAuthApp"


def test_unpublished_app_is_refused_but_chat_test_runs_the_draft(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    draft_app = chat_server.create_app(simple_app_body("Draft only"), publish=False)
    body = {"appId": draft_app, "messages": [{"role": "user", "content": "x"}]}
    refused = post(chat_server, chat_server.admin_key, body)
    assert refused.status_code == 404 and refused.json()["code"] == 500  # FastGPT's generic error
    assert refused.json()["message"].startswith("您的工作流版本过低，请重新发布一次")
    scripted.set_script([text_turn("draft answer")])
    with chat_server.client() as client:
        frames = parse_sse(client.post("/api/core/chat/chatTest", json=body).text)
    assert answer_text(frames) == "draft answer"


def test_published_version_is_frozen_until_the_next_publish(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    app = chat_server.create_app(simple_app_body("Frozen", systemPrompt="v1 prompt"))
    with chat_server.client() as client:
        updated = client.post(
            "/api/core/app/update",
            json={"appId": app, "simpleConfig": {"model": MODEL, "systemPrompt": "v2 prompt"}},
        )
        assert updated.json()["code"] == 200
        body = {"appId": app, "messages": [{"role": "user", "content": "x"}]}
        scripted.set_script([text_turn("a"), text_turn("b")])
        client.post("/api/v1/chat/completions", json=body)
        assert scripted.chat_requests[-1]["messages"][0]["content"] == "v1 prompt"
        client.post("/api/core/app/version/publish", json={"appId": app})
        client.post("/api/v1/chat/completions", json=body)
        assert scripted.chat_requests[-1]["messages"][0]["content"] == "v2 prompt"


def test_v2_non_stream_id_is_empty_without_chat_id(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, app_key: str
) -> None:
    scripted.set_script([text_turn("x"), text_turn("y")])
    assert post(chat_server, app_key, {"messages": [{"role": "user", "content": "q"}]}, 2).json()["id"] == ""
    body = {"chatId": "c-v2", "messages": [{"role": "user", "content": "q"}]}
    assert post(chat_server, app_key, body, 2).json()["id"] == "c-v2"


def test_detail_non_stream_has_response_data_and_new_variables(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, app_id: str, app_key: str
) -> None:
    scripted.set_script([text_turn("Detailed.")])
    body = {
        "detail": True,
        "variables": {"lang": "en"},
        "responseChatItemId": "answer-detailed",
        "messages": [{"role": "user", "content": "q"}],
    }
    reply = post(chat_server, app_key, body).json()
    assert reply["choices"][0]["message"]["content"] == "Detailed."
    assert [r["moduleType"] for r in reply["responseData"]] == ["workflowStart", "chatNode"]
    # FastGPT's getHistoryPreview: roles as chat items name them, the answer last
    preview = [
        {"obj": "System", "value": "Be brief."},
        {"obj": "Human", "value": "q"},
        {"obj": "AI", "value": "Detailed."},
    ]
    assert reply["responseData"][1]["historyPreview"] == preview
    # ... and so they are stored: the answer's node responses read back
    with chat_server.client(app_key) as client:
        query = {"appId": app_id, "chatId": reply["id"], "dataId": "answer-detailed"}
        stored = client.get("/api/core/chat/getResData", params=query).json()["data"]
    assert stored[1]["historyPreview"] == preview
    assert reply["newVariables"]["lang"] == "en"
    plain = post(chat_server, app_key, {"messages": [{"role": "user", "content": "q"}]}).json()
    assert "responseData" not in plain and "newVariables" not in plain


def test_no_model_configured_names_the_settings(bare_server: ChatServer) -> None:
    app = bare_server.create_app(simple_app_body("No model"))
    body = {"appId": app, "detail": True, "messages": [{"role": "user", "content": "x"}]}
    reply = post(bare_server, bare_server.admin_key, body).json()
    assert "FATHOM_OPENAI_BASE_URL" in reply["error"] and "FATHOM_MODELS_FILE" in reply["error"]


def test_chat_test_runs_a_graph_sent_in_the_body(chat_server: ChatServer) -> None:
    app = chat_server.create_app(simple_app_body("Editor"), publish=False)
    graph = {
        "nodes": [
            {"nodeId": "s", "name": "s", "flowNodeType": "workflowStart", "inputs": [], "outputs": []},
            {
                "nodeId": "a",
                "name": "a",
                "flowNodeType": "answerNode",
                "inputs": [{"key": "text", "value": "unsaved graph", "valueType": "string"}],
                "outputs": [],
            },
        ],
        "edges": [
            {"source": "s", "target": "a", "sourceHandle": "s-source-right", "targetHandle": "a-target-left"}
        ],
        "chatConfig": {},
    }
    body = {"appId": app, "messages": [{"role": "user", "content": "x"}], **graph}
    with chat_server.client() as client:
        frames = parse_sse(client.post("/api/core/chat/chatTest", json=body).text)
    assert answer_text(frames) == "\nunsaved graph"
    assert [f.event for f in frames][-2:] == ["answer", "answer"]
