"""The Python runner INSIDE the sandbox: FastGPT's ``main`` contract under the language guards.

Standard library only; never imports fathom. ``_bootstrap.py`` executes this source (passed in its
launch config, after ``_pyguards.py`` in the same namespace) once the OS isolation is in place and
calls :func:`run_python`.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # inside the sandbox these names come from _pyguards.py, executed first
    from fathom.sandbox._pyguards import check_source, install_guards


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


# Python runner: FastGPT contract main() / main(variables) / main(a, b) -> {codeReturn, log}


class _OutputLimit(Exception):
    pass


class _Log:
    def __init__(self, limit: int) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.limit = limit

    def print(self, *args: Any, sep: str | None = " ", end: str | None = "\n", **kw: Any) -> None:
        target = kw.get("file")
        if target is not None:  # print(..., file=f) to a file the code opened in its work dir
            text = (" " if sep is None else sep).join(str(a) for a in args)
            target.write(text + ("\n" if end is None else end))
            return
        text = (" " if sep is None else sep).join(str(a) for a in args)
        self.size += len(text) + 1
        if self.size > self.limit:
            raise _OutputLimit(f"Output limit exceeded ({self.limit} bytes)")
        self.lines.append(text)


class _Helpers:
    """``SystemHelper``: count_token, str_to_base64, create_hmac, delay, http_request."""

    def __init__(self, max_requests: int) -> None:
        self._count = 0
        self._max = max_requests
        self._next_id = 0

    def count_token(self, text: Any) -> int:
        import math

        return math.ceil(len(text if isinstance(text, str) else str(text)) / 4)

    def str_to_base64(self, text: str, prefix: str = "") -> str:
        import base64

        return prefix + base64.b64encode(text.encode("utf-8")).decode("utf-8")

    def create_hmac(self, algorithm: str, secret: str) -> dict[str, str]:
        import base64
        import hmac
        import time
        import urllib.parse

        timestamp = str(int(time.time() * 1000))
        digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), algorithm).digest()
        return {"timestamp": timestamp, "sign": urllib.parse.quote(base64.b64encode(digest).decode())}

    def delay(self, ms: float) -> None:
        import time

        if ms > 10000:
            raise ValueError("Delay must be <= 10000ms")
        time.sleep(max(0, ms) / 1000)

    def http_request(
        self,
        url: str,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        body: Any = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        self._count += 1
        if self._count > self._max:
            raise RuntimeError(f"Request limit exceeded: max {self._max}")
        self._next_id += 1
        request = {"url": url, "method": method, "headers": headers or {}, "body": body, "timeout": timeout}
        _send({"type": "http_request", "id": self._next_id, "request": request})
        line = sys.stdin.readline()
        if not line:
            raise RuntimeError("HTTP request failed: the sandbox parent closed the channel")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(str(reply.get("error") or "HTTP request failed"))
        response: dict[str, Any] = reply["response"]
        return response


def _parameters(user_main: Any) -> list[tuple[str, bool]]:
    """``(name, has_default)`` of main's positional parameters (cheap path for plain functions)."""
    code = getattr(user_main, "__code__", None)
    if code is not None and not isinstance(user_main, type):
        names = code.co_varnames[: code.co_argcount]
        first_default = len(names) - len(getattr(user_main, "__defaults__", None) or ())
        return [(name, i >= first_default) for i, name in enumerate(names)]
    import inspect

    params = inspect.signature(user_main).parameters.values()
    return [(p.name, p.default is not inspect.Parameter.empty) for p in params]


def _call_main(user_main: Any, variables: dict[str, Any]) -> Any:
    params = _parameters(user_main)
    if not params:
        return user_main()
    if len(params) == 1:
        return user_main(variables)
    call_args = []
    for name, has_default in params:
        if name in variables:
            call_args.append(variables[name])
        elif has_default:
            break
        else:
            raise TypeError(f"Missing required argument: '{name}'")
    return user_main(*call_args)


def run_python(cfg: dict[str, Any]) -> None:
    import ast
    import builtins

    _send({"type": "ready"})
    job = json.loads(sys.stdin.readline() or "{}")
    variables = job.get("variables") or {}
    log = _Log(int(cfg["output_bytes"]))
    helpers = _Helpers(int(cfg["max_requests"]))
    safe_builtins = dict(vars(builtins))
    safe_builtins["print"] = log.print
    # The code's globals are a registered module's namespace: dataclasses and typing look up
    # sys.modules[cls.__module__] to resolve string annotations.
    module = type(sys)("__sandbox__")
    sys.modules["__sandbox__"] = module
    env: dict[str, Any] = module.__dict__
    env.update(
        {
            "__builtins__": safe_builtins,
            "variables": variables,
            "SystemHelper": helpers,
            "system_helper": helpers,
            "count_token": helpers.count_token,
            "str_to_base64": helpers.str_to_base64,
            "create_hmac": helpers.create_hmac,
            "delay": helpers.delay,
            "http_request": helpers.http_request,
            "json": json,
            "math": __import__("math"),
            "time": __import__("time"),
        }
    )
    if isinstance(variables, dict):
        # dunder names (``__builtins__``, ``__name__``) stay the runner's: a variable cannot replace them
        env.update(
            {
                k: v
                for k, v in variables.items()
                if isinstance(k, str) and k.isidentifier() and not k.startswith("__")
            }
        )
    try:
        tree = ast.parse(job.get("code", ""), "<sandbox>")
        if cfg.get("guards", True):
            check_source(tree)
        code = compile(tree, "<sandbox>", "exec")
        if cfg.get("guards", True):
            install_guards(cfg["work_dir"], safe_builtins, env)
        exec(code, env)  # noqa: S102 - this is the sandbox
        user_main = env.get("main")
        if user_main is None:
            raise RuntimeError("No 'main' function defined")
        result = _call_main(user_main, variables if isinstance(variables, dict) else {})
        payload = json.dumps(result, ensure_ascii=False, default=str)
        _send(
            {
                "type": "result",
                "success": True,
                "data": {"codeReturn": json.loads(payload), "log": "\n".join(log.lines)},
            }
        )
    except MemoryError:
        _send({"type": "result", "success": False, "message": "Memory limit exceeded", "reason": "memory"})
    except _OutputLimit as exc:
        _send({"type": "result", "success": False, "message": str(exc), "reason": "output"})
    except RecursionError:
        _send({"type": "result", "success": False, "message": "maximum recursion depth exceeded"})
    except BaseException as exc:  # noqa: BLE001 - every user error becomes a result
        _send({"type": "result", "success": False, "message": str(exc) or type(exc).__name__})
