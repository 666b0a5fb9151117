"""The AI chat node through the real ``openai`` client against the scripted loopback server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from wf_builders import answer, edge, node_input, output, start, workflow

from fathom.llm import ChatModel
from fathom.testing import ScriptedOpenAIServer, text_turn
from fathom.workflow import AnswerEvent, WorkflowEvent, WorkflowServices, run_workflow

QUOTES = [
    {
        "id": "q1",
        "q": "Fathom runs workflows.",
        "a": "",
        "sourceName": "doc.md",
        "datasetId": "d",
        "collectionId": "c",
    },
    {
        "id": "q2",
        "q": "It is written in Python.",
        "a": "Yes.",
        "sourceName": "faq",
        "datasetId": "d",
        "collectionId": "c",
    },
]


def chat_node(**inputs: Any) -> dict[str, Any]:
    values = {
        "model": "scripted-chat",
        "temperature": 0,
        "history": 2,
        "systemPrompt": "Be brief.",
        "userChatInput": ["start", "userChatInput"],
        "quoteQA": ["VARIABLE_NODE_ID", "quotes"],
        **inputs,
    }
    types = {"history": "chatHistory", "quoteQA": "datasetQuote", "temperature": "number"}
    return {
        "nodeId": "chat",
        "name": "AI 对话",
        "flowNodeType": "chatNode",
        "showStatus": True,
        "version": "4813",
        "inputs": [node_input(k, v, types.get(k, "string")) for k, v in values.items()],
        "outputs": [output("answerText"), output("reasoningText"), output("history", "chatHistory")],
    }


def graph(**inputs: Any) -> dict[str, Any]:
    return workflow(
        [start(), chat_node(**inputs), answer("echo", "[{{$chat.answerText$}}]")],
        [edge("start", "chat"), edge("chat", "echo")],
    )


@pytest.fixture
async def server() -> AsyncIterator[ScriptedOpenAIServer]:
    async with ScriptedOpenAIServer() as scripted:
        yield scripted


def services(server: ScriptedOpenAIServer) -> WorkflowServices:
    def factory(model_id: str) -> ChatModel:
        if model_id != "scripted-chat":
            raise LookupError(model_id)
        return server.chat_model(model_id)

    return WorkflowServices(chat_model_factory=factory)


HISTORY = [
    {"obj": "Human", "value": [{"type": "text", "text": {"content": "old q"}}]},
    {"obj": "AI", "value": [{"type": "text", "text": {"content": "old a"}}]},
]


async def test_chat_node_streams_answer_with_quotes_in_system_prompt(server: ScriptedOpenAIServer) -> None:
    server.add_turns(text_turn("  It runs workflows.  ", usage=(50, 5)))
    events: list[WorkflowEvent] = []
    result = await run_workflow(
        graph(),
        query="What does Fathom do?",
        variables={"quotes": QUOTES},
        histories=HISTORY,
        services=services(server),
        emit=events.append,
    )
    streamed = "".join(e.text for e in events if isinstance(e, AnswerEvent))
    assert streamed == "  It runs workflows.  "
    assert result.node_outputs["chat"]["answerText"] == "It runs workflows."
    assert result.answer_text == "It runs workflows.\n[It runs workflows.]"
    messages = server.chat_requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    system = messages[0]["content"]
    assert system.startswith("Be brief.\n\n===---===---===\n\n使用 <Data></Data> 标记中的内容作为你的知识")
    assert "Fathom runs workflows.\n------\nIt is written in Python.\nYes." in system
    assert messages[-1]["content"] == "What does Fathom do?"
    assert result.flow_usages == [
        {
            "moduleName": "AI 对话",
            "totalPoints": 0.0,
            "model": "scripted-chat",
            "inputTokens": 50,
            "outputTokens": 5,
        }
    ]
    history = result.node_outputs["chat"]["history"]
    assert [item["obj"] for item in history] == ["Human", "AI", "Human", "AI"]


async def test_user_quote_role_puts_quotes_and_question_in_user_message(server: ScriptedOpenAIServer) -> None:
    server.add_turns(text_turn("ok"))
    await run_workflow(
        graph(aiChatQuoteRole="user"),
        query="Which language?",
        variables={"quotes": QUOTES[1:]},
        services=services(server),
    )
    messages = server.chat_requests[0]["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    expected_tail = (
        "It is written in Python.\nYes.\n</Data>\n\n回答要求：\n"
        "- 如果你不清楚答案，你需要澄清。\n- 避免提及你是从 <Data></Data> 获取的知识。\n"
        "- 保持答案与 <Data></Data> 中描述的一致。\n- 使用 Markdown 语法优化回答格式。\n"
        '- 使用与问题相同的语言回答。\n\n问题:"""Which language?"""'
    )
    assert messages[-1]["content"].endswith(expected_tail)


async def test_unknown_model_is_a_node_error_routed_like_fastgpt(server: ScriptedOpenAIServer) -> None:
    result = await run_workflow(graph(model="nope"), query="q", services=services(server))
    assert result.error == "Model nope is undefined, you need to select a chat model."
    assert result.skipped_node_ids == ["echo"]
    assert server.chat_requests == []


@pytest.mark.parametrize(
    ("quotes", "with_prompt"),
    [
        (None, False),  # the variable is not set: the reference does not resolve
        ([{"id": "x", "q": ""}], False),  # an item without q: FastGPT's checkQuoteQAValue drops the input
        ("not a list", True),  # valueTypeFormat turns a non-JSON string into [] first, as FastGPT does
        ([], True),  # an empty search result still gets the (empty) quote prompt
        (QUOTES, True),
    ],
)
async def test_quote_prompt_only_when_the_quote_input_resolves(
    server: ScriptedOpenAIServer, quotes: Any, with_prompt: bool
) -> None:
    server.add_turns(text_turn("ok"))
    variables = {} if quotes is None else {"quotes": quotes}
    await run_workflow(graph(), query="q", variables=variables, services=services(server))
    system = server.chat_requests[0]["messages"][0]["content"]
    assert ("<Data>" in system or "<Reference>" in system or "quote" in system.lower()) is with_prompt, system


def test_history_preview_is_fastgpts_get_history_preview() -> None:
    """Roles as FastGPT's chat items name them; tool messages left out; the first system prompt and the
    last two messages keep 10,000 characters at each end, every other message 50."""
    from fathom.workflow.nodes.chat import _history_preview

    long = "x" * 20_050 + "y" * 50
    preview = _history_preview(
        [
            {"role": "system", "content": long},
            {"role": "user", "content": [{"type": "text", "text": "a" * 120}, {"type": "image_url"}]},
            {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "lookup"}}]},
            {"role": "tool", "content": "result"},
            {"role": "user", "content": "question"},
            {"role": "assistant", "content": " answer "},
        ]
    )
    assert [p["obj"] for p in preview] == ["System", "Human", "AI", "Human", "AI"]
    assert preview[0]["value"] == "x" * 10_000 + "\n\n...[hide 100 chars]...\n\n" + "x" * 9_950 + "y" * 50
    assert preview[1]["value"] == "a" * 50 + "\n\n...[hide 20 chars]...\n\n" + "a" * 50
    assert preview[2]["value"] == "lookup"
    assert preview[3:] == [{"obj": "Human", "value": "question"}, {"obj": "AI", "value": "answer"}]
