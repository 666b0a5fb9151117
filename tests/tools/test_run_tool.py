"""run_tool: the four seed-002 paths (hit, miss, parse failure, execute throws) and cancellation."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fathom.tools import (
    CancelSignal,
    ParseResult,
    ToolCall,
    ToolContext,
    ToolDefinition,
    ToolResult,
    run_tool,
)


def call(name: str, arguments: str | None = "{}", call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def echo_tool(**kwargs: Any) -> ToolDefinition:
    async def execute(ctx: ToolContext) -> ToolResult:
        return ToolResult(response=json.dumps(ctx.params, sort_keys=True))

    return ToolDefinition(
        name="echo",
        description="Echo the arguments",
        parameters={"type": "object", "properties": {"text": {"type": "string", "minLength": 2}}},
        execute=execute,
        **kwargs,
    )


async def test_known_tool_executes_with_parsed_params() -> None:
    result = await run_tool(call("echo", '{"text": "hi"}'), [], [echo_tool()])
    assert result.response == '{"text": "hi"}'
    assert result.error_message is None


async def test_unknown_tool_name_returns_call_tool_not_found() -> None:
    result = await run_tool(call("imaginary_tool"), [], [echo_tool()])
    assert result.response == "Call tool not found: imaginary_tool"
    assert result.error_message == "Call tool not found: imaginary_tool"


async def test_parse_params_failure_message_is_returned_to_the_model() -> None:
    def parse(raw: str) -> ParseResult:
        return ParseResult.fail("query must be at least 3 characters")

    tool = echo_tool(parse_params=parse)
    result = await run_tool(call("echo", '{"text": "x"}'), [], [tool])
    assert result.response == "query must be at least 3 characters"


async def test_execute_exception_becomes_tool_error_text() -> None:
    async def execute(ctx: ToolContext) -> str:
        raise RuntimeError("database is down")

    tool = ToolDefinition(name="boom", execute=execute)
    result = await run_tool(call("boom"), [], [tool])
    assert result.response == "Tool error: database is down"
    assert result.error_message == "Tool error: database is down"


async def test_exception_without_message_reports_its_class_name() -> None:
    def execute(ctx: ToolContext) -> str:
        raise KeyError()

    result = await run_tool(call("boom"), [], [ToolDefinition(name="boom", execute=execute)])
    assert result.response == "Tool error: KeyError"


def required_tool(**kwargs: Any) -> ToolDefinition:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"],
    }
    return ToolDefinition(name="echo", parameters=schema, execute=lambda ctx: "ran", **kwargs)


@pytest.mark.parametrize("arguments", ["{city: Oslo", "[1, 2]", '"Oslo"', "42"])
async def test_arguments_that_are_not_a_json_object_parse_to_empty_and_name_the_missing_fields(
    arguments: str,
) -> None:
    result = await run_tool(call("echo", arguments), [], [required_tool()])
    assert result.response == (
        "Tool input validation failed: / must have required property 'city'; "
        "/ must have required property 'days'"
    )


async def test_strict_arguments_refuse_text_that_is_not_json() -> None:
    result = await run_tool(call("echo", "{text: hi"), [], [echo_tool(strict_args=True)])
    assert result.response.startswith("Tool arguments are not valid JSON: ")
    assert "Send the arguments as one JSON object." in result.response


async def test_strict_arguments_refuse_json_that_is_not_an_object() -> None:
    result = await run_tool(call("echo", "[1, 2]"), [], [echo_tool(strict_args=True)])
    assert result.response == (
        "Tool arguments must be a JSON object, got list. Send the arguments as one JSON object."
    )


@pytest.mark.parametrize("arguments", [None, "", "   "])
async def test_empty_arguments_parse_as_an_empty_object(arguments: str | None) -> None:
    result = await run_tool(call("echo", arguments), [], [echo_tool()])
    assert result.response == "{}"


async def test_default_parse_validates_against_the_declared_schema() -> None:
    result = await run_tool(call("echo", '{"text": "x"}'), [], [echo_tool()])
    assert result.response.startswith("Tool input validation failed: ")
    assert "/text" in result.response


async def test_validation_can_be_switched_off() -> None:
    result = await run_tool(call("echo", '{"text": "x"}'), [], [echo_tool(validate=False)])
    assert result.response == '{"text": "x"}'


async def test_seed_002_dict_shape_is_accepted() -> None:
    async def execute(ctx: ToolContext) -> dict[str, Any]:
        return {"response": f"got {ctx.params['n']}", "stop": True}

    tool = {
        "schema": {"type": "function", "function": {"name": "count", "parameters": {"type": "object"}}},
        "parseParams": lambda raw: {"success": True, "data": json.loads(raw)},
        "execute": execute,
    }
    result = await run_tool(call("count", '{"n": 3}'), [], [tool])
    assert result.response == "got 3"
    assert result.stop is True

    failing = dict(tool, parseParams=lambda raw: {"success": False, "errorMessage": "n is required"})
    result = await run_tool(call("count", "{}"), [], [failing])
    assert result.response == "n is required"


async def test_execute_sees_call_and_a_snapshot_of_messages() -> None:
    seen: dict[str, Any] = {}

    def execute(ctx: ToolContext) -> str:
        seen["call_id"] = ctx.call.id
        seen["messages"] = list(ctx.messages)
        return "ok"

    messages = [{"role": "user", "content": "hi"}]
    await run_tool(call("t", "{}", call_id="abc"), messages, [ToolDefinition(name="t", execute=execute)])
    assert seen == {"call_id": "abc", "messages": messages}


async def test_non_string_outputs_are_serialised_as_json() -> None:
    tool = ToolDefinition(name="t", execute=lambda ctx: {"answer": 42, "ok": True})
    result = await run_tool(call("t"), [], [tool])
    assert json.loads(result.response) == {"answer": 42, "ok": True}


async def test_tool_calls_from_the_openai_sdk_are_accepted() -> None:
    from openai.types.chat import ChatCompletionMessageToolCall

    sdk_call = ChatCompletionMessageToolCall.model_validate(call("echo", '{"text": "sdk"}'))
    result = await run_tool(sdk_call, [], [echo_tool()])
    assert result.response == '{"text": "sdk"}'


async def test_malformed_call_returns_a_result() -> None:
    result = await run_tool({"id": "x"}, [], [echo_tool()])
    assert result.response.startswith("Tool error: invalid tool call")


async def test_timeout_is_reported_as_a_model_visible_result() -> None:
    async def slow(ctx: ToolContext) -> str:
        await asyncio.sleep(30)
        return "never"

    tool = ToolDefinition(name="slow", execute=slow, timeout=0.05)
    result = await run_tool(call("slow"), [], [tool])
    assert result.response == "Tool call timed out after 0.05 seconds"
    assert result.error_message == result.response


async def test_signal_cancels_a_running_call() -> None:
    cancelled = asyncio.Event()

    async def slow(ctx: ToolContext) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    signal = CancelSignal()
    asyncio.get_running_loop().call_later(0.05, signal.cancel, "user pressed stop")
    result = await run_tool(call("slow"), [], [ToolDefinition(name="slow", execute=slow)], signal=signal)
    assert result.response == "Tool call cancelled: user pressed stop"
    assert cancelled.is_set()


async def test_a_plain_asyncio_event_works_as_signal() -> None:
    event = asyncio.Event()
    event.set()
    executed = []
    tool = ToolDefinition(name="t", execute=lambda ctx: executed.append(1))
    result = await run_tool(call("t"), [], [tool], signal=event)
    assert result.response == "Tool call cancelled: cancelled"
    assert executed == []


async def test_signal_after_deadline() -> None:
    async def slow(ctx: ToolContext) -> str:
        await asyncio.sleep(30)
        return "never"

    result = await run_tool(
        call("slow"), [], [ToolDefinition(name="slow", execute=slow)], signal=CancelSignal.after(0.02)
    )
    assert result.response == "Tool call cancelled: timed out after 0.02 seconds"


async def test_execute_receives_a_signal_even_when_none_is_given() -> None:
    def execute(ctx: ToolContext) -> str:
        return str(ctx.signal.is_set())

    result = await run_tool(call("t"), [], [ToolDefinition(name="t", execute=execute)])
    assert result.response == "False"


async def test_tool_result_wire_format_is_camel_case() -> None:
    result = ToolResult(response="x", assistant_messages=[{"role": "assistant"}], error_message="e")
    wire = result.to_wire()
    assert wire["assistantMessages"] == [{"role": "assistant"}]
    assert wire["errorMessage"] == "e"
    assert ToolResult.model_validate(wire) == result
    assert ToolCall.coerce(call("a")).function.name == "a"


@settings(max_examples=60, deadline=None)
@given(
    name=st.text(min_size=0, max_size=20),
    arguments=st.one_of(st.none(), st.text(max_size=40)),
)
def test_run_tool_never_raises(name: str, arguments: str | None) -> None:
    def execute(ctx: ToolContext) -> str:
        if isinstance(ctx.params, dict) and ctx.params.get("boom"):
            raise ValueError("boom")
        return "ok"

    tools = [ToolDefinition(name="t", execute=execute), echo_tool()]
    result = asyncio.run(run_tool(call(name, arguments), [], tools))
    assert isinstance(result, ToolResult)
    assert isinstance(result.response, str)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=100, deadline=None)
@given(value=json_values)
def test_default_parser_accepts_exactly_json_objects(value: Any) -> None:
    from fathom.tools import parse_json_args

    parsed = parse_json_args(json.dumps(value), strict=True)
    if isinstance(value, dict):
        assert parsed.success and parsed.data == value
    else:
        assert not parsed.success
        assert parsed.error_message.startswith("Tool arguments must be a JSON object, got ")
    lenient = parse_json_args(json.dumps(value))
    assert lenient.success and lenient.data == (value if isinstance(value, dict) else {})


@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
        {"type": "object", "properties": {"a": {"type": 12}}},
    ],
)
async def test_a_broken_parameter_schema_is_reported_not_raised(parameters: dict[str, Any]) -> None:
    executed: list[Any] = []
    tool = ToolDefinition(name="t", parameters=parameters, execute=lambda ctx: executed.append(ctx.params))
    result = await run_tool(call("t", '{"a": 1}'), [], [tool])
    assert result.response.startswith("Tool input validation failed: ")
    assert executed == []
