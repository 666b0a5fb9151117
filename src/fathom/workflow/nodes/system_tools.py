"""FastGPT's built-in system tools (``pluginId: "community-<id>"`` / ``"systemTool-<id>"``) that need no
third-party account, with FastGPT's ids, input keys and outputs, run by the ``pluginModule`` and ``tool``
nodes. Webhook senders go out through the run's HTTP client (the egress guard in production).

Every call goes through :data:`SYSTEM_TOOL_CATALOG` (seed 004), bound to the running node: the input
is checked (an object), ``authorize`` refuses what the run may not do (a webhook sender needs the run's
outbound HTTP client and an address), ``execute`` runs the tool, and ``parse_output`` checks the result
holds exactly the tool's declared output keys (:class:`fathom.tools.ToolOutputError` otherwise).

An id Fathom does not provide fails the node with an error naming it and the ids that are available;
:func:`system_tool_templates` is what the API lists.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import hashlib
import hmac
import operator
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from fathom.tools import ToolContext, ToolDefinition, ToolOutputError, define_tool_catalog
from fathom.workflow.dispatch import NodeContext, ServiceUnavailableError
from fathom.workflow.variables import replace_variable

PREFIXES = ("community-", "systemTool-")
MAX_DELAY_MS = 300_000

Handler = Callable[[NodeContext, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class SystemTool:
    """One tool: FastGPT's id (without prefix), name, intro, input keys and output keys."""

    id: str
    name: str
    intro: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    run: Handler


def _first(params: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if params.get(key) not in (None, ""):
            return params[key]
    return None


async def _get_time(ctx: NodeContext, params: dict[str, Any]) -> dict[str, Any]:
    given = _first(params, "time")
    return {"time": str(given) if given else datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")}


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _evaluate_expression(expr: str) -> float | int:
    """An arithmetic expression (numbers, + - * / % ** ^, parentheses); nothing else is evaluated."""

    def walk(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool)
        ):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow) and abs(right) > 1000:
                raise ValueError("exponent too large")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](walk(node.operand))
        raise ValueError(f"unsupported element {type(node).__name__}")

    # expr-eval (FastGPT's parser) writes powers as ^, binding tighter than * and /, as ** does
    value: float | int = walk(ast.parse(expr.strip().replace("^", "**"), mode="eval"))
    return value


async def _math(ctx: NodeContext, params: dict[str, Any]) -> dict[str, Any]:
    expr = _first(params, "expr", "数学表达式")
    if not isinstance(expr, str):
        raise ValueError("expr must be a string")
    try:
        value = _evaluate_expression(expr)
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError) as exc:
        raise ValueError(f"Invalid math expression {expr!r}: {exc}") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return {"result": value}


async def _delay(ctx: NodeContext, params: dict[str, Any]) -> dict[str, Any]:
    ms = _first(params, "ms", "延迟时长")
    try:
        ms = float(ms)
    except (TypeError, ValueError):
        return {"result": ms}
    if 0 < ms <= MAX_DELAY_MS:  # FastGPT's bounds: outside them the value comes back without waiting
        await asyncio.sleep(ms / 1000)
    return {"result": int(ms) if ms.is_integer() else ms}


async def _text_editor(ctx: NodeContext, params: dict[str, Any]) -> dict[str, Any]:
    text = _first(params, "text", "文本", "system_textareaInput")
    values = {k: v for k, v in params.items() if k not in ("text", "文本", "system_textareaInput")}
    return {"text": str(replace_variable(str(text or ""), values))}


async def _post(ctx: NodeContext, url: Any, body: dict[str, Any]) -> dict[str, Any]:
    client = ctx.services.http_client
    if client is None:
        raise ServiceUnavailableError("Webhook tools need the outbound HTTP client")
    if not isinstance(url, str) or not url:
        raise ValueError("The webhook address is empty")
    response = await client.request("POST", url, json=body, timeout=30)
    try:
        result: Any = response.json()
    except ValueError:
        result = response.text
    if response.status_code >= 400:
        raise ValueError(f"Webhook answered {response.status_code}: {result}")
    return {"result": result}


async def _wework(ctx: NodeContext, params: dict[str, Any]) -> dict[str, Any]:
    message = _first(params, "发送的消息", "content") or ""
    body = {"msgtype": "text", "text": {"content": str(message)}}
    return await _post(ctx, _first(params, "企微机器人地址", "hook_url"), body)


async def _dingtalk(ctx: NodeContext, params: dict[str, Any]) -> dict[str, Any]:
    url = _first(params, "钉钉机器人地址", "hook_url")
    secret = _first(params, "加签值", "secret")
    if isinstance(url, str) and secret:
        stamp = str(int(time.time() * 1000))
        digest = hmac.new(str(secret).encode(), f"{stamp}\n{secret}".encode(), hashlib.sha256).digest()
        sign = quote(base64.b64encode(digest).decode(), safe="")
        url = f"{url}{'&' if '?' in url else '?'}timestamp={stamp}&sign={sign}"
    message = _first(params, "发送的消息", "content") or ""
    return await _post(ctx, url, {"msgtype": "text", "text": {"content": str(message)}})


async def _feishu(ctx: NodeContext, params: dict[str, Any]) -> dict[str, Any]:
    body = {"msg_type": "text", "content": {"text": str(_first(params, "content", "发送的消息") or "")}}
    return await _post(ctx, _first(params, "hook_url", "飞书机器人地址"), body)


SYSTEM_TOOLS: dict[str, SystemTool] = {
    tool.id: tool
    for tool in (
        SystemTool("getTime", "获取当前时间", "Current date and time", ("time",), ("time",), _get_time),
        SystemTool(
            "mathExprVal", "数学公式执行", "Evaluate an arithmetic expression", ("expr",), ("result",), _math
        ),
        SystemTool("delay", "延迟", "Wait some milliseconds (at most 300000)", ("ms",), ("result",), _delay),
        SystemTool(
            "textEditor", "文本加工", "Fill {{variables}} into a text", ("text",), ("text",), _text_editor
        ),
        SystemTool(
            "WeWorkWebhook",
            "企业微信 webhook",
            "Send a WeCom robot message",
            ("企微机器人地址", "发送的消息"),
            ("result",),
            _wework,
        ),
        SystemTool(
            "DingTalkWebhook",
            "钉钉 webhook",
            "Send a DingTalk robot message",
            ("钉钉机器人地址", "加签值", "发送的消息"),
            ("result",),
            _dingtalk,
        ),
        SystemTool(
            "feishu",
            "飞书机器人 webhook",
            "Send a Feishu robot message",
            ("content", "hook_url"),
            ("result",),
            _feishu,
        ),
    )
}
_ALIASES = {"sleep": "delay", "Delay": "delay", "WeWork": "WeWorkWebhook", "DingTalk": "DingTalkWebhook"}


WEBHOOK_ADDRESS_KEYS: dict[str, tuple[str, ...]] = {
    "WeWorkWebhook": ("企微机器人地址", "hook_url"),
    "DingTalkWebhook": ("钉钉机器人地址", "hook_url"),
    "feishu": ("hook_url", "飞书机器人地址"),
}


def _catalog_entry(tool: SystemTool) -> ToolDefinition:
    def authorize(params: dict[str, Any], tc: ToolContext) -> None:
        keys = WEBHOOK_ADDRESS_KEYS.get(tool.id)
        if keys is None:
            return
        node: NodeContext = tc.app
        if node.services.http_client is None:
            raise ServiceUnavailableError("Webhook tools need the outbound HTTP client")
        if not isinstance(_first(params, *keys), str):
            raise ValueError("The webhook address is empty")

    async def execute(tc: ToolContext) -> dict[str, Any]:
        return await tool.run(tc.app, dict(tc.params))

    def parse_output(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict) or set(value) != set(tool.outputs):
            got = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise ToolOutputError(f"System tool {tool.id} returned {got}, expected {sorted(tool.outputs)}")
        return value

    return ToolDefinition(
        name=tool.id,
        description=tool.intro,
        parameters={"type": "object", "properties": {key: {"description": key} for key in tool.inputs}},
        execute=execute,
        kind="systemTool",
        authorize=authorize,
        parse_output=parse_output,
    )


#: FastGPT's system tools as one catalog (seed 004); ``bind(app=node_context)`` per call.
SYSTEM_TOOL_CATALOG = define_tool_catalog(_catalog_entry(tool) for tool in SYSTEM_TOOLS.values())


async def invoke_system_tool(ctx: NodeContext, plugin_id: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run ``plugin_id`` through the catalog bound to ``ctx``: authorize, execute, parse_output."""
    tool = _find_system_tool(plugin_id)
    invocation = await SYSTEM_TOOL_CATALOG.bind(app=ctx).invoke(tool.id, params)
    value: dict[str, Any] = invocation.value
    return value


def is_system_tool_id(plugin_id: str | None) -> bool:
    """True for FastGPT system tool ids (``community-…`` / ``systemTool-…``)."""
    return bool(plugin_id) and str(plugin_id).startswith(PREFIXES)


def _find_system_tool(plugin_id: str) -> SystemTool:
    """The tool ``plugin_id`` names; ``LookupError`` naming it and the available ids otherwise."""
    name = plugin_id.split("-", 1)[1] if is_system_tool_id(plugin_id) else plugin_id
    tool = SYSTEM_TOOLS.get(_ALIASES.get(name, name))
    if tool is None:
        available = ", ".join(f"community-{key}" for key in SYSTEM_TOOLS)
        raise LookupError(
            f"System tool '{plugin_id}' is not provided by Fathom (it needs FastGPT's plugin service or a "
            f"third-party account); available: {available}"
        )
    return tool


def system_tool_templates() -> list[dict[str, Any]]:
    """What ``/api/core/app/plugin/getSystemPluginTemplates`` lists."""
    return [
        {
            "id": f"community-{tool.id}",
            "pluginId": f"community-{tool.id}",
            "flowNodeType": "pluginModule",
            "name": tool.name,
            "intro": tool.intro,
            "inputs": [{"key": key, "valueType": "string"} for key in tool.inputs],
            "outputs": [{"key": key, "valueType": "any"} for key in tool.outputs],
        }
        for tool in SYSTEM_TOOLS.values()
    ]
