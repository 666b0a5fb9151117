"""``httpRequest468``: an HTTP request through the injected client (the egress guard in production).

URL, headers, query params and form fields are templated; the JSON body is templated with
quote-aware escaping and parsed as JSON5; outputs are read from the response by JSONPath.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote, urlencode

from fathom.workflow.constants import VARIABLE_NODE_ID, FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, ServiceUnavailableError, register_node
from fathom.workflow.events import FastAnswerEvent
from fathom.workflow.jsonpath import read_output
from fathom.workflow.values import format_variable_val_by_type, js_string, parse_json5
from fathom.workflow.variables import get_reference_variable_value, replace_editor_variable

CONTENT_TYPES = {
    "none": "",
    "form-data": "",
    "x-www-form-urlencoded": "application/x-www-form-urlencoded",
    "json": "application/json",
    "xml": "application/xml",
    "raw-text": "text/plain",
}
_NAMED_KEYS = {
    NodeInputKey.httpMethod,
    NodeInputKey.httpReqUrl,
    NodeInputKey.httpHeaders,
    NodeInputKey.httpParams,
    NodeInputKey.httpJsonBody,
    NodeInputKey.httpFormBody,
    NodeInputKey.httpContentType,
    NodeInputKey.httpTimeout,
    NodeInputKey.headerSecret,
    NodeInputKey.addInputParam,
}
_NODE_REF = re.compile(r"\{\{\$([^.]+)\.([^$]+)\$\}\}")
_GLOBAL_REF = re.compile(r"\{\{([^}]+)\}\}")
_OUTPUTS_NOT_FROM_BODY = {NodeOutputKey.error, NodeOutputKey.httpRawResponse, NodeOutputKey.addOutputParam}


class HttpStatusError(RuntimeError):
    """The server answered with a 4xx/5xx status."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"Request failed with status code {status}")
        self.status = status
        self.body = body


def _in_quotes(text: str, start: int) -> bool:
    return text[:start].count('"') % 2 == 1


def _json_fragment(value: Any, quoted: bool) -> str:
    """FastGPT's ``replaceJsonBodyString`` ``valToStr``: an unresolved value is ``null`` as a JSON value and
    nothing inside a string; strings inside quotes are JSON-escaped; objects are compact JSON."""
    if value is None:
        return "" if quoted else "null"
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return text.replace('"', '\\"') if quoted else text
    if isinstance(value, str):
        if quoted:
            return json.dumps(value, ensure_ascii=False)[1:-1]
        try:
            json.loads(value)
            return value
        except ValueError:
            return json.dumps(value, ensure_ascii=False)[1:-1]
    return js_string(value)


def _render_json_body(ctx: NodeContext, text: str, all_variables: dict[str, Any]) -> str:
    """Substitute ``{{$node.key$}}`` and ``{{key}}`` into a JSON body, escaping inside strings."""

    def node_ref(match: re.Match[str]) -> str:
        node_id, key = match.group(1), match.group(2)
        if node_id == VARIABLE_NODE_ID:
            value = ctx.variables.get(key)
        else:
            node = ctx.nodes.get(node_id)
            value = None
            if node is not None:
                output = node.outputs_by_id.get(key)
                if output is not None:
                    value = format_variable_val_by_type(output.value, output.value_type)
                elif (node_input := node.input(key)) is not None:
                    value = get_reference_variable_value(node_input.value, ctx.nodes, ctx.variables)
        return _json_fragment(value, _in_quotes(match.string, match.start()))

    text = _NODE_REF.sub(node_ref, text)
    text = _GLOBAL_REF.sub(
        lambda m: (
            _json_fragment(all_variables.get(m.group(1)), _in_quotes(m.string, m.start()))
            if m.group(1) in all_variables or not m.group(1).startswith("$")
            else m.group(0)
        ),
        text,
    )
    return re.sub(r'(".*?")\s*:\s*undefined\b', r"\1:null", text)


def _pairs(ctx: NodeContext, items: Any, render: Any) -> dict[str, str]:
    result: dict[str, str] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("key"):
            result[js_string(render(item["key"]))] = js_string(render(item.get("value", "")))
    return result


def _with_query_params(url: str, params: dict[str, str]) -> str:
    """The URL with the node's params appended after the URL's own query, as FastGPT's axios call builds it:
    the fragment is dropped, the URL's query stays first, a key in both is sent twice."""
    if not params:
        return url
    url = url.split("#", 1)[0]
    encoded = urlencode(params, quote_via=lambda text, *_: quote(text, safe=":$,[]").replace("%20", "+"))
    return f"{url}{'&' if '?' in url else '?'}{encoded}"


def _header_secrets(ctx: NodeContext, store: Any) -> dict[str, str]:
    if not store:
        return {}
    if ctx.services.secrets is not None:
        return ctx.services.secrets.get_secret_value(store)
    headers: dict[str, str] = {}
    for key, entry in (store or {}).items():
        if isinstance(entry, dict) and entry.get("value"):
            value = str(entry["value"])
            headers["Authorization" if key in ("Bearer", "Basic") else key] = (
                f"{key} {value}" if key in ("Bearer", "Basic") else value
            )
        elif isinstance(entry, dict) and entry.get("secret"):
            raise ServiceUnavailableError("Encrypted header secrets need the secret service")
    return headers


@register_node(FlowNodeType.httpRequest468)
async def dispatch_http_request(ctx: NodeContext) -> DispatchResponse:
    """Outputs a value per output key (JSONPath), ``httpRawResponse`` and, on failure, ``error``."""
    client = ctx.services.http_client
    if client is None:
        raise ServiceUnavailableError("The HTTP request node needs an outbound HTTP client")
    params = ctx.params
    method = str(params.get(NodeInputKey.httpMethod) or "POST").upper()
    url = params.get(NodeInputKey.httpReqUrl)
    if not url:
        raise ValueError("Http url is empty")
    content_type = params.get(NodeInputKey.httpContentType) or "json"
    timeout = float(params.get(NodeInputKey.httpTimeout) or 60)
    body_params = {k: v for k, v in params.items() if k not in _NAMED_KEYS}
    info = ctx.run.run_info
    system = {
        "appId": info.get("appId"),
        "chatId": info.get("chatId"),
        "responseChatItemId": info.get("responseChatItemId"),
        "histories": ctx.histories[-10:],
    }
    concat = {**ctx.variables, **body_params, **system}
    all_variables = {NodeInputKey.addInputParam: concat, **concat}

    def render(text: Any) -> Any:
        return replace_editor_variable(text, ctx.nodes, all_variables)

    url = js_string(render(url))
    header_items = list(params.get(NodeInputKey.httpHeaders) or [])
    if CONTENT_TYPES.get(content_type):
        header_items = [{"key": "Content-Type", "value": CONTENT_TYPES[content_type]}, *header_items]
    headers = _pairs(ctx, header_items, render)
    query = _pairs(ctx, params.get(NodeInputKey.httpParams), render)
    request: dict[str, Any] = {}
    shown_body: Any = None
    raw_body = params.get(NodeInputKey.httpJsonBody) or ""
    if content_type in ("form-data", "x-www-form-urlencoded"):
        form = _pairs(ctx, params.get(NodeInputKey.httpFormBody), render)
        request["data"] = form
        shown_body = form
    elif content_type == "json" and raw_body:
        rendered = _render_json_body(ctx, raw_body, all_variables)
        try:
            shown_body = parse_json5(rendered)
        except ValueError as exc:
            raise ValueError(f"Invalid JSON body: {rendered}") from exc
        request["content"] = json.dumps(shown_body, ensure_ascii=False).encode()
    elif content_type not in ("none", "json") and raw_body:
        shown_body = js_string(render(raw_body)).replace("UNDEFINED_SIGN", "null")
        request["content"] = shown_body.encode()
    if method not in ("POST", "PUT", "PATCH"):
        request = {}
    response_info = {
        "params": query or None,
        "body": shown_body or None,
        "headers": headers or None,
    }
    headers = {**_header_secrets(ctx, params.get(NodeInputKey.headerSecret)), **headers}
    try:
        response = await client.request(
            method, _with_query_params(url, query), headers=headers, timeout=timeout, **request
        )
        try:
            raw: Any = response.json()
        except ValueError:
            raw = response.text
        if response.status_code >= 400:
            raise HttpStatusError(response.status_code, raw)
    except Exception as exc:
        message = str(exc) or exc.__class__.__name__
        formatted: dict[str, Any] = {"message": message}
        if isinstance(exc, HttpStatusError):
            formatted.update({"status": exc.status, "data": exc.body})
        outputs = {NodeOutputKey.error: formatted, NodeOutputKey.httpRawResponse: message}
        data_response = {**response_info, "httpResult": {"error": formatted}}
        if ctx.node.catch_error:
            return DispatchResponse(
                error={**outputs, NodeOutputKey.errorText: message},
                response_data={**data_response, "error": message},
            )
        return DispatchResponse(data=outputs, response_data=data_response)
    body_json = raw if isinstance(raw, (dict, list)) else {}
    results = {
        output.key: read_output(output.key, body_json)
        for output in ctx.node.outputs
        if output.id not in _OUTPUTS_NOT_FROM_BODY and output.key not in _OUTPUTS_NOT_FROM_BODY
    }
    if isinstance(body_json, dict) and isinstance(body_json.get(NodeOutputKey.answerText), str):
        ctx.emit(FastAnswerEvent(text=body_json[NodeOutputKey.answerText], node_id=ctx.node_id))
    found = {k: v for k, v in results.items() if v is not None}
    return DispatchResponse(
        data={**results, NodeOutputKey.httpRawResponse: raw},
        response_data={"totalPoints": 0, **response_info, "httpResult": raw},
        tool_responses=found if found else raw,
    )
