"""A looping workflow run to its end through ``/api/v1/chat/completions`` (FastGPT's run/skip/wait
scenario 11, ``checkNodeRunStatus/base.test.ts``: a user select that loops back to two earlier nodes).

start → reply11 (the scripted model) → reply22 → pick (user select): ``end`` → bye, ``again22`` → reply22,
``again11`` → reply11. Under the older common/recursive rule the loop-back into reply22 waited on the
forward edge from reply11 (scenario 11.3) and the run stopped with nothing to say."""

from __future__ import annotations

from typing import Any

from chat_support import MODEL, ChatServer

from fathom.testing import ScriptedOpenAIServer
from fathom.testing.scripted_turns import text_turn
from workflow_json import edge, field

START = {
    "nodeId": "start",
    "name": "start",
    "flowNodeType": "workflowStart",
    "inputs": [field("userChatInput", "")],
    "outputs": [{"id": "userChatInput", "key": "userChatInput", "valueType": "string", "type": "static"}],
}


def answer(node_id: str, text: str) -> dict[str, Any]:
    return {"nodeId": node_id, "name": node_id, "flowNodeType": "answerNode", "inputs": [field("text", text)]}


def loop_workflow() -> dict[str, Any]:
    reply11 = {
        "nodeId": "reply11",
        "name": "reply11",
        "flowNodeType": "chatNode",
        "inputs": [
            field("model", MODEL),
            field("systemPrompt", "Be brief."),
            field("history", 0, "chatHistory"),
            field("userChatInput", ["start", "userChatInput"], render="reference"),
        ],
        "outputs": [{"id": "answerText", "key": "answerText", "valueType": "string", "type": "static"}],
    }
    options = [{"key": "end", "value": "End"}, {"key": "again22", "value": "Back to 22"}]
    options.append({"key": "again11", "value": "Back to 11"})
    pick = {
        "nodeId": "pick",
        "name": "pick",
        "flowNodeType": "userSelect",
        "inputs": [field("description", "Again?"), field("userSelectOptions", options, "any")],
        "outputs": [{"id": "selectResult", "key": "selectResult", "valueType": "string"}],
    }
    return {
        "nodes": [START, reply11, answer("reply22", "twenty-two"), pick, answer("bye", "bye")],
        "edges": [
            edge("start", "reply11"),
            edge("reply11", "reply22"),
            edge("reply22", "pick"),
            edge("pick", "bye", "end"),
            edge("pick", "reply22", "again22"),
            edge("pick", "reply11", "again11"),
        ],
        "chatConfig": {},
    }


def turn(server: ChatServer, app: str, text: str) -> tuple[str, list[str]]:
    body = {"appId": app, "chatId": "loop", "detail": True, "messages": [{"role": "user", "content": text}]}
    with server.client() as client:
        reply = client.post("/api/v1/chat/completions", json=body).json()
    content = reply["choices"][0]["message"]["content"]
    if isinstance(content, str):  # no pause: plain text
        content = [{"type": "text", "text": {"content": content}}]
    texts = [part["text"]["content"] for part in content if part.get("type") == "text"]
    ran = [node["nodeId"] for node in reply["responseData"]]
    return "".join(texts), ran


def test_user_select_loops_back_to_earlier_nodes_then_ends(
    chat_server: ChatServer, scripted: ScriptedOpenAIServer
) -> None:
    scripted.set_script([text_turn("first"), text_turn("second")])
    app = chat_server.create_app({"name": "Loop", "type": "advanced", **loop_workflow()})
    # each pause ends a request; the paused select is not among the nodes that ran
    assert turn(chat_server, app, "go") == ("first\ntwenty-two", ["start", "reply11", "reply22"])
    # scenario 11.3: pick → reply22 active while reply11 → reply22 waits (reset when reply22 ran)
    assert turn(chat_server, app, "Back to 22") == ("\ntwenty-two", ["pick", "reply22"])
    # the outer loop: back to the model node, which runs again and leads to reply22 (scenario 11.1)
    assert turn(chat_server, app, "Back to 11") == ("second\ntwenty-two", ["pick", "reply11", "reply22"])
    assert turn(chat_server, app, "End") == ("\nbye", ["pick", "bye"])
    assert scripted.remaining_turns == 0


def entry_loop_workflow() -> dict[str, Any]:
    """FastGPT's scenario 9 shape: the loop-back pick → A comes from a node that the start also reaches
    without passing A (through B), so the older rule counted it as a common edge and A never ran."""
    check = {
        "nodeId": "sw",
        "name": "sw",
        "flowNodeType": "ifElseNode",
        "inputs": [
            field(
                "ifElseList",
                [
                    {
                        "condition": "AND",
                        "list": [
                            {"variable": ["start", "userChatInput"], "condition": "equalTo", "value": "never"}
                        ],
                    }
                ],
                "any",
                "hidden",
            )
        ],
        "outputs": [{"id": "ifElseResult", "key": "ifElseResult", "valueType": "string"}],
    }
    options = [{"key": "end", "value": "End"}, {"key": "again", "value": "Again"}]
    pick = {
        "nodeId": "pick",
        "name": "pick",
        "flowNodeType": "userSelect",
        "inputs": [field("description", "Again?"), field("userSelectOptions", options, "any")],
        "outputs": [{"id": "selectResult", "key": "selectResult", "valueType": "string"}],
    }
    return {
        "nodes": [
            START,
            check,
            answer("A", "a"),
            answer("B", "b"),
            answer("C", "c"),
            pick,
            answer("E", "bye"),
        ],
        "edges": [
            edge("start", "sw"),
            edge("sw", "A", "ELSE"),
            edge("sw", "B", "ELSE"),
            edge("A", "C"),
            edge("B", "C"),
            edge("C", "pick"),
            edge("pick", "A", "again"),
            edge("pick", "E", "end"),
        ],
        "chatConfig": {},
    }


def test_loop_entry_node_runs_on_first_entry(chat_server: ChatServer) -> None:
    app = chat_server.create_app({"name": "Entry loop", "type": "advanced", **entry_loop_workflow()})
    text, ran = turn(chat_server, app, "go")
    # scenario 9.1: A runs although the loop-back pick → A waits; C waits for both A and B (9.5)
    assert sorted(ran) == ["A", "B", "C", "start", "sw"] and ran.count("C") == 1
    assert text.endswith("\nc")
    assert turn(chat_server, app, "End") == ("\nbye", ["pick", "E"])
