"""A pause taken by one provider resumes under the other (same transcript and provider state)."""

from __future__ import annotations

import importlib.util

import pytest
from agent_helpers import Recorder, make_runtime

from fathom.agent import AgentLoopInput, SystemToolsConfig, run_agent_loop
from fathom.testing import ScriptedOpenAIServer, text_turn, tool_call_turn

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pydantic_ai") is None,
    reason="pydanticAI provider: pydantic-ai-slim not installed (pip install '.[agents-pydantic-ai]')",
)

ASK = {
    "reason": "pick",
    "blockerType": "user_choice",
    "questions": [
        {"question": "Size?", "options": [{"summary": "S", "value": "s"}, {"summary": "L", "value": "l"}]}
    ],
}


@pytest.mark.parametrize(("first", "second"), [("fastAgent", "pydanticAI"), ("pydanticAI", "fastAgent")])
async def test_ask_pause_resumes_under_the_other_provider(
    server: ScriptedOpenAIServer, first: str, second: str
) -> None:
    server.set_script([tool_call_turn([("ask_user", ASK)]), text_turn("size l it is")])
    system = SystemToolsConfig(ask=True, plan=True)
    paused = await run_agent_loop(
        first,
        AgentLoopInput(messages=[{"role": "user", "content": "order"}], system_prompt="Shop."),
        make_runtime(server, Recorder(), system_tools=system),
    )
    assert paused.status == "paused" and paused.pause is not None
    resumed = await run_agent_loop(
        second,
        AgentLoopInput(
            messages=paused.complete_messages, provider_state=paused.provider_state, user_answer='["l"]'
        ),
        make_runtime(server, Recorder(), system_tools=system),
    )
    assert resumed.status == "done" and resumed.answer_text == "size l it is"
    sent = server.chat_requests[1]["messages"]
    assert sent[0] == {"role": "system", "content": "Shop."}
    assert sent[-1] == {"role": "tool", "tool_call_id": "call_1_0", "content": "Q1: Size?\nA1: l"}
