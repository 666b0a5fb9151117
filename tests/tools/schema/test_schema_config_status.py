"""Tool configuration status (spec §1.9) and tool id rules (spec §1.10)."""

from __future__ import annotations

from typing import Any

import pytest

from fathom.tools.schema import (
    ToolIdParts,
    get_tool_config_status,
    split_combine_tool_id,
    validate_tool_configuration,
)
from fathom.tools.schema.config_status import _check_needs_user_configuration, _is_tool_input_value_configured


@pytest.mark.parametrize(
    ("item", "configured"),
    [
        ({"key": "k", "renderTypeList": ["input"]}, False),
        ({"key": "k", "renderTypeList": ["input"], "value": ""}, False),
        ({"key": "k", "renderTypeList": ["input"], "value": None, "defaultValue": "d"}, True),
        ({"key": "k", "renderTypeList": ["input"], "defaultValue": 0}, True),
        ({"key": "k", "renderTypeList": ["switch"], "value": False}, True),
        ({"key": "k", "renderTypeList": ["JSONEditor"], "value": []}, False),
        ({"key": "k", "renderTypeList": ["JSONEditor"], "value": {}}, False),
        ({"key": "k", "renderTypeList": ["JSONEditor"], "value": {"a": 1}}, True),
        ({"key": "k", "renderTypeList": ["timeRangeSelect"], "value": ["2024-01-01", None]}, False),
        ({"key": "k", "renderTypeList": ["timeRangeSelect"], "value": ["2024-01-01", "2024-02-01"]}, True),
    ],
)
def test_input_value_configured_rules(item: dict[str, Any], configured: bool) -> None:
    assert _is_tool_input_value_configured(item) is configured


def test_explicit_value_argument_overrides_the_stored_one() -> None:
    assert not _is_tool_input_value_configured(
        {"key": "k", "renderTypeList": ["input"], "value": "x"}, value=""
    )
    assert _is_tool_input_value_configured({"key": "k", "renderTypeList": ["input"]}, value="x")
    assert not _is_tool_input_value_configured({"key": "k", "renderTypeList": ["input"]}, value=[])


def test_tools_without_form_inputs_need_no_config() -> None:
    inputs = [
        {"key": "q", "renderTypeList": ["agentGenerated", "input"], "selectedType": "agentGenerated"},
        {"key": "system_forbid_stream", "renderTypeList": ["switch"]},
        {"key": "history", "renderTypeList": ["numberInput"]},
        {"key": "ref", "renderTypeList": ["reference"]},
    ]
    assert not _check_needs_user_configuration(inputs)
    status = get_tool_config_status(inputs)
    assert (status.need_config, status.status) == (False, "noConfig")


def test_only_required_form_inputs_decide_configured_versus_waiting() -> None:
    optional_empty = {"key": "opt", "renderTypeList": ["input"]}
    required_empty = {"key": "req", "renderTypeList": ["numberInput"], "required": True}
    assert get_tool_config_status([optional_empty]).status == "configured"
    waiting = get_tool_config_status([optional_empty, required_empty])
    assert (waiting.need_config, waiting.status) == (True, "waitingForConfig")
    filled = {**required_empty, "value": 3}
    assert get_tool_config_status([optional_empty, filled]).status == "configured"


def test_system_input_config_is_always_checked() -> None:
    empty = {"key": "system_input_config", "renderTypeList": ["hidden"]}
    assert _check_needs_user_configuration([empty])
    assert get_tool_config_status([empty]).status == "waitingForConfig"
    assert get_tool_config_status([{**empty, "value": {"type": "system"}}]).status == "configured"


def test_is_tool_param_default_counts_as_agent_generated_for_status() -> None:
    inputs = [{"key": "q", "renderTypeList": ["input"], "isToolParam": True, "required": True}]
    assert get_tool_config_status(inputs).status == "noConfig"


@pytest.mark.parametrize(
    ("inputs", "kwargs", "valid"),
    [
        ([{"key": "q", "renderTypeList": ["agentGenerated"]}], {}, True),
        (
            [
                {
                    "key": "p",
                    "renderTypeList": ["password", "agentGenerated"],
                    "selectedType": "agentGenerated",
                }
            ],
            {},
            False,
        ),
        ([{"key": "r", "renderTypeList": ["reference"]}], {}, False),
        ([{"key": "r", "renderTypeList": ["reference"], "toolDescription": "d"}], {}, True),
        ([{"key": "f", "renderTypeList": ["fileSelect"]}], {}, False),
        ([{"key": "f", "renderTypeList": ["fileSelect"]}], {"can_upload_file": True}, True),
        (
            [{"key": "f", "renderTypeList": ["fileSelect"]}, {"key": "g", "renderTypeList": ["fileSelect"]}],
            {"can_upload_file": True},
            False,
        ),
        ([{"key": "d", "renderTypeList": ["selectDataset"]}], {}, False),
        ([{"key": "d", "renderTypeList": ["selectDataset"]}], {"app_level": False}, True),
        ([{"key": "m", "renderTypeList": ["settingLLMModel"]}], {}, False),
        ([{"key": "v", "renderTypeList": ["customVariable"]}], {}, False),
        ([{"key": "a", "renderTypeList": ["addInputParam"]}], {}, False),
    ],
)
def test_validate_tool_configuration(
    inputs: list[dict[str, Any]], kwargs: dict[str, Any], valid: bool
) -> None:
    assert validate_tool_configuration(inputs, **kwargs) is valid


@pytest.mark.parametrize(
    ("tool_id", "source", "plugin_id"),
    [
        ("6650f6f4a2c1e0b2a1d3c4e5", "personal", "6650f6f4a2c1e0b2a1d3c4e5"),
        ("systemTool-getTime", "systemTool", "systemTool-getTime"),
        ("commercial-abc", "commercial", "commercial-abc"),
        ("mcp-parent123/search-web", "mcp", "parent123/search-web"),
        ("http-toolset/op-1", "http", "toolset/op-1"),
        ("community-google", "systemTool", "systemTool-google"),
        ("commercial-dalle3", "systemTool", "systemTool-dalle3"),
    ],
)
def test_tool_id_rules(tool_id: str, source: str, plugin_id: str) -> None:
    assert split_combine_tool_id(tool_id) == ToolIdParts(source, plugin_id)


@pytest.mark.parametrize("tool_id", ["-abc", "mcp-", "systemTool-"])
def test_tool_id_without_source_or_rest_is_rejected(tool_id: str) -> None:
    with pytest.raises(ValueError, match="^pluginId not found$"):
        split_combine_tool_id(tool_id)
