"""``code``: runs the node's JavaScript or Python ``main(variables)`` in the injected sandbox
(``fathom.sandbox.SandboxRunner``) and exposes the returned object's keys as outputs."""

from __future__ import annotations

from typing import Any, Protocol

from fathom.workflow.constants import FlowNodeType, NodeInputKey, NodeOutputKey
from fathom.workflow.dispatch import DispatchResponse, NodeContext, ServiceUnavailableError, register_node
from fathom.workflow.nodes.chat import node_error


class CodeSandbox(Protocol):
    """What the code node needs from the sandbox runner."""

    async def run_python(self, code: str, variables: dict[str, Any] | None = None) -> Any: ...

    async def run_javascript(self, code: str, variables: dict[str, Any] | None = None) -> Any: ...


@register_node(FlowNodeType.code)
async def dispatch_run_code(ctx: NodeContext) -> DispatchResponse:
    """Outputs ``system_rawResponse`` (the return value) plus one output per returned key."""
    sandbox: CodeSandbox | None = ctx.services.sandbox
    if sandbox is None:
        raise ServiceUnavailableError("The code node needs the code sandbox service")
    code = str(ctx.params.get("code") or "")
    language = str(ctx.params.get("codeType") or "js").lower()
    # an input whose reference did not resolve reaches the script as absent (JavaScript ``undefined``),
    # so ``main({a = 1})`` or ``def main(a=1)`` applies its own default, as in FastGPT
    given = ctx.params.get(NodeInputKey.addInputParam) or {}
    variables = {key: value for key, value in given.items() if value is not None}
    try:
        if language in ("py", "python"):
            result = await sandbox.run_python(code, dict(variables))
        else:
            result = await sandbox.run_javascript(code, dict(variables))
    except Exception as exc:  # the sandbox refused (e.g. no isolation): a node error, catchable
        return node_error(str(exc) or exc.__class__.__name__)
    if not getattr(result, "success", False):
        message = getattr(result, "message", "") or "Run code failed"
        error = node_error(message)
        error.response_data = {
            "customInputs": variables,
            "error": message,
            "codeLog": getattr(result, "log", ""),
        }
        return error
    returned = result.code_return
    data: dict[str, Any] = {NodeOutputKey.rawResponse: returned}
    if isinstance(returned, dict):
        data.update(returned)
    return DispatchResponse(
        data=data,
        response_data={"customInputs": variables, "customOutputs": returned, "codeLog": result.log},
        tool_responses=returned,
    )
