"""function_tool: schema from type hints and docstrings, pydantic validation, context injection."""

from __future__ import annotations

import json
import threading
from typing import Literal

from pydantic import BaseModel

from fathom.tools import FunctionTool, ToolContext, function_tool, run_tool
from fathom.tools.docstrings import parse_docstring


class Address(BaseModel):
    city: str
    zip_code: str | None = None


@function_tool
async def get_weather(city: str, unit: Literal["c", "f"] = "c", days: int = 1) -> str:
    """Get the weather forecast for a city.

    Args:
        city: Name of the city, e.g. "Paris".
        unit: Temperature unit,
            Celsius or Fahrenheit.
        days: How many days to forecast.
    """
    return f"{city}:{unit}:{days}"


def call(name: str, args: object) -> dict[str, object]:
    raw = args if isinstance(args, str) else json.dumps(args)
    return {"id": "c1", "type": "function", "function": {"name": name, "arguments": raw}}


def test_schema_comes_from_hints_and_docstring() -> None:
    assert isinstance(get_weather, FunctionTool)
    assert get_weather.schema == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": 'Name of the city, e.g. "Paris".'},
                    "unit": {
                        "type": "string",
                        "enum": ["c", "f"],
                        "default": "c",
                        "description": "Temperature unit, Celsius or Fahrenheit.",
                    },
                    "days": {"type": "integer", "default": 1, "description": "How many days to forecast."},
                },
                "required": ["city"],
            },
        },
    }


async def test_valid_arguments_are_coerced_and_passed() -> None:
    result = await run_tool(call("get_weather", {"city": "Oslo", "days": "3"}), [], [get_weather])
    assert result.response == "Oslo:c:3"


async def test_invalid_arguments_return_pydantic_errors_with_retry_hint() -> None:
    result = await run_tool(call("get_weather", {"unit": "k"}), [], [get_weather])
    assert result.response.startswith("Invalid arguments for tool get_weather: ")
    assert "city: Field required" in result.response
    assert "unit: Input should be 'c' or 'f'" in result.response
    assert result.response.endswith("Fix the errors and try again.")


async def test_not_json_arguments_parse_to_empty_and_name_the_missing_field() -> None:
    result = await run_tool(call("get_weather", "city=Oslo"), [], [get_weather])
    assert result.response.startswith("Invalid arguments for tool get_weather: city: Field required")


async def test_strict_function_tool_refuses_arguments_that_are_not_json() -> None:
    assert get_weather.function is not None
    strict_weather = function_tool(get_weather.function, strict=True)
    result = await run_tool(call("get_weather", "city=Oslo"), [], [strict_weather])
    assert result.response.startswith("Tool arguments are not valid JSON")


async def test_nested_models_and_context_parameter() -> None:
    @function_tool(name="ship", description="Ship a parcel")
    def ship(to: Address, weight_kg: float, ctx: ToolContext) -> dict[str, object]:
        """Ignored summary.

        :param to: destination address
        :param weight_kg: parcel weight
        """
        return {"city": to.city, "weight": weight_kg, "call": ctx.call.id, "thread": threading.get_ident()}

    params = ship.schema["function"]["parameters"]
    assert ship.schema["function"]["description"] == "Ship a parcel"
    assert set(params["properties"]) == {"to", "weight_kg"}
    assert params["properties"]["weight_kg"]["description"] == "parcel weight"
    assert "Address" in params["$defs"]
    assert "title" not in params["$defs"]["Address"]

    result = await run_tool(call("ship", {"to": {"city": "Rome"}, "weight_kg": 2}), [], [ship])
    value = json.loads(result.response)
    assert value["city"] == "Rome" and value["weight"] == 2.0 and value["call"] == "c1"
    # a plain function runs in a worker thread, not on the event loop's thread
    assert value["thread"] != threading.get_ident()


async def test_strict_rejects_unknown_keys() -> None:
    @function_tool(strict=True)
    def add(a: int, b: int) -> int:
        return a + b

    assert (await run_tool(call("add", {"a": 1, "b": 2}), [], [add])).response == "3"
    result = await run_tool(call("add", {"a": 1, "b": 2, "c": 3}), [], [add])
    assert "c: Extra inputs are not permitted" in result.response
    assert add(2, 2) == 4  # still callable as a function


def test_docstring_styles() -> None:
    numpy_doc = """Do things.

    Parameters
    ----------
    alpha : int
        The first
        value.
    beta : str
        The second.

    Returns
    -------
    int
    """
    info = parse_docstring(numpy_doc)
    assert info.summary == "Do things."
    assert info.params == {"alpha": "The first value.", "beta": "The second."}

    google = parse_docstring("Sum.\n\nArgs:\n    x (int): the x\n    y: the y\n\nReturns:\n    the sum\n")
    assert google.summary == "Sum."
    assert google.params == {"x": "the x", "y": "the y"}
    assert parse_docstring(None).params == {}
