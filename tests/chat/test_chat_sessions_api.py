"""Chat sessions over HTTP: ``chatId`` semantics, stored variables, interactive pause and resume,
stored items and usage, stop, heartbeat and resumption with ``Last-Event-ID``."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_support import ChatServer, answer_text, parse_sse, simple_app_body

from fathom.platform import Platform
from fathom.testing import ScriptedOpenAIServer, text_turn

FIXTURES = Path(__file__).parents[1] / "workflow" / "fixtures"
sys.path.insert(0, str(FIXTURES.parent))
from wf_http_server import loopback_server  # noqa: E402  (the workflow tests' loopback HTTP server)


def fixture_workflow(name: str) -> dict[str, Any]:
    workflow: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))["workflow"]
    return workflow


def workflow_app(chat_server: ChatServer, name: str) -> str:
    return chat_server.create_app({"name": name, "type": "advanced", **fixture_workflow(name)})


def chat(chat_server: ChatServer, body: dict[str, Any], *, version: int = 1) -> Any:
    with chat_server.client() as client:
        response = client.post(f"/api/v{version}/chat/completions", json=body)
    return response.json() if not body.get("stream") else parse_sse(response.text)


def records(chat_server: ChatServer, app_id: str, chat_id: str) -> list[dict[str, Any]]:
    with chat_server.client() as client:
        reply = client.post(
            "/api/core/chat/getPaginationRecords", json={"appId": app_id, "chatId": chat_id, "pageSize": 30}
        ).json()
    items: list[dict[str, Any]] = reply["data"]["list"]
    return items


@pytest.fixture(scope="module")
def helper(chat_server: ChatServer) -> str:
    return chat_server.create_app(simple_app_body("Sessions"))


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def test_chat_id_loads_stored_history_and_stores_two_items_per_turn(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    scripted.set_script([text_turn("Paris."), text_turn("About 2 million.")])
    chat(chat_server, {"appId": helper, "chatId": "trip", "messages": [user("Capital of France?")]})
    chat(chat_server, {"appId": helper, "chatId": "trip", "messages": [user("Population?")]})
    sent = scripted.chat_requests[-1]["messages"]
    assert [m["content"] for m in sent[1:]] == ["Capital of France?", "Paris.", "Population?"]
    items = records(chat_server, helper, "trip")
    assert [i["obj"] for i in items] == ["Human", "AI", "Human", "AI"]
    assert items[-1]["value"] == [{"type": "text", "text": {"content": "About 2 million."}}]


def test_without_chat_id_history_comes_from_messages_and_a_new_chat_is_saved(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    scripted.set_script([text_turn("Four.")])
    messages = [user("What is 1+1?"), {"role": "assistant", "content": "Two."}, user("And 2+2?")]
    reply = chat(chat_server, {"appId": helper, "chatId": "", "messages": messages})
    sent = scripted.chat_requests[-1]["messages"]
    assert [m["content"] for m in sent[1:]] == ["What is 1+1?", "Two.", "And 2+2?"]
    items = records(chat_server, helper, reply["id"])
    assert [i["obj"] for i in items] == ["Human", "AI"]


def test_stored_variables_merge_under_request_variables(chat_server: ChatServer) -> None:
    workflow = {
        "nodes": [
            {
                "nodeId": "start",
                "name": "start",
                "flowNodeType": "workflowStart",
                "inputs": [],
                "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string"}],
            },
            {
                "nodeId": "say",
                "name": "say",
                "flowNodeType": "answerNode",
                "inputs": [{"key": "text", "value": "{{city}}/{{unit}}", "valueType": "string"}],
                "outputs": [],
            },
        ],
        "edges": [
            {
                "source": "start",
                "target": "say",
                "sourceHandle": "start-source-right",
                "targetHandle": "say-target-left",
            }
        ],
        "chatConfig": {},
    }
    app = chat_server.create_app({"name": "Vars", "type": "advanced", **workflow})
    first = {"appId": app, "chatId": "v", "variables": {"city": "Oslo", "unit": "C"}, "messages": [user("a")]}
    assert chat(chat_server, first)["choices"][0]["message"]["content"] == "\nOslo/C"
    second = {"appId": app, "chatId": "v", "variables": {"unit": "F"}, "messages": [user("b")]}
    assert chat(chat_server, second)["choices"][0]["message"]["content"] == "\nOslo/F"


def test_user_select_pause_is_complete_for_api_clients_and_resume_updates_the_item(
    chat_server: ChatServer,
) -> None:
    app = workflow_app(chat_server, "user_select_pauses_then_resumes_on_chosen_branch")
    frames = chat(
        chat_server,
        {"appId": app, "chatId": "s1", "stream": True, "detail": True, "messages": [user("start")]},
    )
    interactive = [f.json() for f in frames if f.event == "interactive"]
    assert len(interactive) == 1
    payload = interactive[0]
    assert payload["chatId"] == "s1" and payload["responseChatItemId"]
    assert payload["interactive"]["type"] == "userSelect"
    assert payload["interactive"]["params"]["userSelectOptions"] == [
        {"key": "a", "value": "Apple"},
        {"key": "b", "value": "Banana"},
    ]
    assert payload["interactive"]["params"]["description"] == "Choose a fruit"
    reply = chat(chat_server, {"appId": app, "chatId": "s1", "messages": [user("Banana")]})
    assert reply["choices"][0]["message"]["content"] == "\npicked banana"
    items = records(chat_server, app, "s1")
    assert [i["obj"] for i in items] == ["Human", "AI"]  # the pending turn was updated in place
    values = items[1]["value"]
    assert items[1]["dataId"] == payload["responseChatItemId"]
    select = next(v for v in values if v["type"] == "interactive")
    assert select["interactive"]["params"]["userSelectedVal"] == "Banana"
    assert values[-1] == {"type": "text", "text": {"content": "\npicked banana"}}


def test_form_input_resumes_from_json_answer(chat_server: ChatServer) -> None:
    app = workflow_app(chat_server, "form_input_pauses_then_exposes_fields")
    paused = chat(chat_server, {"appId": app, "chatId": "f1", "detail": True, "messages": [user("hi")]})
    content = paused["choices"][0]["message"]["content"]
    assert isinstance(content, list) and content[-1]["interactive"]["type"] == "userInput"
    assert paused["interactive"]["params"]["inputForm"][0]["key"] == "name"
    answer = json.dumps({"name": "Ann", "age": 30})
    reply = chat(chat_server, {"appId": app, "chatId": "f1", "messages": [user(answer)]})
    assert reply["choices"][0]["message"]["content"] == "\nHello Ann, 30"


def _fixture_names() -> list[str]:
    return sorted(p.stem for p in FIXTURES.glob("*.json"))


@pytest.fixture(scope="module")
def http_base() -> Iterator[str]:
    with loopback_server() as url:
        yield url


def interactive_text(values: list[dict[str, Any]]) -> str:
    """What a stream shows for a pause besides the text values: a select's ``"\n" + description``."""
    record = values[-1]["interactive"]
    return "\n" + record["params"]["description"] if record["type"] == "userSelect" else ""


@pytest.mark.parametrize("name", _fixture_names())
def test_stream_and_non_stream_give_the_same_content_on_every_fixture(
    chat_server: ChatServer, http_base: str, name: str
) -> None:
    spec = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    app = chat_server.create_app({"name": name, "type": "advanced", **spec["workflow"]})
    for detail in (False, True):
        for step in spec["steps"]:
            question = step.get("query") if "query" in step else step["resume"]
            text = question if isinstance(question, str) else json.dumps(question)
            base = {"appId": app, "detail": detail, "variables": {"base": http_base}}
            plain = chat(chat_server, {**base, "chatId": f"{name}-{detail}-json", "messages": [user(text)]})
            frames = chat(
                chat_server,
                {**base, "chatId": f"{name}-{detail}-sse", "stream": True, "messages": [user(text)]},
            )
            streamed = answer_text(frames)
            content = plain["choices"][0]["message"]["content"]
            if isinstance(content, list):  # detail and a pause: the raw values; compare their text
                assert content[-1]["type"] == "interactive"
                texts = "".join(v["text"]["content"] for v in content if v["type"] == "text")
                assert streamed == texts + interactive_text(content)
                content = texts
            else:
                assert streamed == content
            if "answer" in step["expect"] and not isinstance(plain["choices"][0]["message"]["content"], list):
                assert step["expect"]["answer"] in content


def test_usage_records_and_key_usage_are_stored(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    scripted.set_script([text_turn("Counted.", usage=(11, 3))])
    chat(chat_server, {"appId": helper, "messages": [user("count tokens")]})

    async def summary(platform: Platform) -> Any:
        return await platform.usage.summarize(chat_server.boot.team_id, app_id=helper)

    rows = chat_server.run(summary)
    assert sum(r.input_tokens for r in rows) >= 11 and sum(r.output_tokens for r in rows) >= 3


def _slow_stream(chat_server: ChatServer, body: dict[str, Any], frames_wanted: int) -> list[str]:
    """Read the first frames of a stream, then drop the connection."""
    got: list[str] = []
    with (
        chat_server.client() as client,
        client.stream("POST", "/api/v2/chat/completions", json=body) as response,
    ):
        buffer = ""
        for chunk in response.iter_text():
            buffer += chunk
            while "\n\n" in buffer:
                frame, buffer = buffer.split("\n\n", 1)
                got.append(frame + "\n\n")
            if len(got) >= frames_wanted:
                break
    return got


def test_dropped_stream_resumes_with_last_event_id_and_gets_the_rest(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    full = "The quick brown fox jumps over the lazy dog."
    scripted.set_script([text_turn(full, text_chunk_chars=4, delay=0.02)])
    body = {"appId": helper, "chatId": "drop", "stream": True, "detail": True, "messages": [user("tell")]}
    first = parse_sse("".join(_slow_stream(chat_server, body, 4)))
    last_id = first[-1].id
    assert last_id is not None
    with chat_server.client() as client:
        rest = client.get(
            "/api/v2/chat/resume",
            params={"appId": helper, "chatId": "drop"},
            headers={"Last-Event-ID": str(last_id)},
        )
    frames = parse_sse(rest.text)
    assert frames[0].event == "resumePhase" and frames[-1].event == "resumeCompleted"
    numbered = [f for f in frames if f.id is not None]
    assert numbered[0].id == last_id + 1
    assert answer_text(first) + answer_text(frames) == full
    assert any(f.data == "[DONE]" for f in frames)


def test_repost_with_last_event_id_replays_a_pending_interactive(chat_server: ChatServer) -> None:
    app = workflow_app(chat_server, "user_select_pauses_then_resumes_on_chosen_branch")
    body = {"appId": app, "chatId": "re-sel", "stream": True, "detail": True, "messages": [user("start")]}
    full = chat(chat_server, body)
    with chat_server.client() as client:
        response = client.post("/api/v2/chat/completions", json=body, headers={"Last-Event-ID": "1"})
    replay = parse_sse(response.text)
    assert [f.json() for f in replay if f.event == "interactive"] == [
        f.json() for f in full if f.event == "interactive"
    ]
    assert len(records(chat_server, app, "re-sel")) == 2  # the replay started no new run


def test_resume_of_unknown_chat_says_unavailable(chat_server: ChatServer, helper: str) -> None:
    with chat_server.client() as client:
        response = client.get("/api/v2/chat/resume", params={"appId": helper, "chatId": "never"})
    frames = parse_sse(response.text)
    assert [(f.event, f.json()["reason"]) for f in frames] == [("resumeUnavailable", "mirrorUnavailable")]


def test_stop_from_another_connection_ends_the_run_and_keeps_the_partial_answer(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    scripted.set_script([text_turn("x" * 400, text_chunk_chars=2, delay=0.02)])
    body = {"appId": helper, "chatId": "halt", "stream": True, "detail": True, "messages": [user("go")]}
    result: dict[str, Any] = {}

    def consume() -> None:
        with chat_server.client() as client:
            result["frames"] = parse_sse(client.post("/api/v2/chat/completions", json=body).text)

    reader = threading.Thread(target=consume)
    reader.start()
    with chat_server.client() as client:
        stopped = False
        deadline = time.monotonic() + 10
        while not stopped and time.monotonic() < deadline:
            reply = client.post("/api/v2/chat/stop", json={"appId": helper, "chatId": "halt"}).json()
            stopped = reply["data"]["success"]
            time.sleep(0.05)
    reader.join(timeout=20)
    assert stopped
    frames = result["frames"]
    assert frames[-1].data == "[DONE]"
    text = answer_text(frames)
    assert len(text) < 400
    stored = records(chat_server, helper, "halt")[-1]["value"]
    assert stored == [{"type": "text", "text": {"content": text}}]
    with chat_server.client() as client:
        again = client.post("/api/v2/chat/stop", json={"appId": helper, "chatId": "halt"}).json()
    assert again["data"] == {"success": False}


def test_heartbeat_is_an_empty_answer_chunk_without_id(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer, helper: str
) -> None:
    chat_server.app.state.sse_heartbeat_s = 0.05
    try:
        scripted.set_script([text_turn("slow", text_chunk_chars=2, delay=0.4)])
        frames = chat(chat_server, {"appId": helper, "stream": True, "messages": [user("wait")]})
    finally:
        chat_server.app.state.sse_heartbeat_s = 10.0
    beats = [f for f in frames if f.id is None]
    assert beats, "no heartbeat during a 0.8 s silence with a 0.05 s heartbeat"
    assert all(b.json()["choices"][0]["delta"]["content"] == "" for b in beats)
    assert answer_text(frames) == "slow"


def test_update_variables_event_and_stored_chat_variables(chat_server: ChatServer) -> None:
    app = workflow_app(chat_server, "loop_back_edge_runs_again_then_exits")
    body = {"appId": app, "chatId": "vars-upd", "stream": True, "detail": True, "messages": [user("go")]}
    frames = chat(chat_server, body)
    updates = [f.json() for f in frames if f.event == "updateVariables"]
    assert updates and updates[-1]["n"] == "done"
    assert not {"chatId", "appId", "histories"} & set(updates[-1])  # system variables stay inside
    with chat_server.client() as client:
        init = client.get("/api/core/chat/init", params={"appId": app, "chatId": "vars-upd"}).json()["data"]
    assert init["variables"]["n"] == "done"


def test_resume_ignores_a_resent_transcript(chat_server: ChatServer) -> None:
    app = workflow_app(chat_server, "user_select_pauses_then_resumes_on_chosen_branch")
    chat(chat_server, {"appId": app, "chatId": "s-full", "messages": [user("start")]})
    transcript = [user("start"), {"role": "assistant", "content": "\nhi"}, user("Banana")]
    reply = chat(chat_server, {"appId": app, "chatId": "s-full", "messages": transcript})
    assert reply["choices"][0]["message"]["content"] == "\npicked banana"
    assert [i["obj"] for i in records(chat_server, app, "s-full")] == ["Human", "AI"]
