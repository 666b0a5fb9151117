"""The Python runner INSIDE the sandbox: FastGPT's ``main`` contract under the language guards.

Standard library only; never imports fathom. ``_bootstrap.py`` executes this source (passed in its
launch config) after the OS isolation is in place and calls :func:`run_python`.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

PRELOAD = [
    "base64",
    "binascii",
    "bisect",
    "calendar",
    "cmath",
    "collections",
    "collections.abc",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "hmac",
    "inspect",
    "itertools",
    "json",
    "math",
    "numbers",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "struct",
    "textwrap",
    "time",
    "typing",
    "unicodedata",
    "urllib.parse",
    "uuid",
]
ALLOWED_IMPORTS = frozenset(PRELOAD) - {"inspect"}
REMOVED_BUILTINS = ("eval", "exec", "compile", "globals", "locals", "vars", "breakpoint", "input", "help")
BLOCKED_EVENTS = (
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.killpg",
    "subprocess.Popen",
    "_posixsubprocess",
    "socket.",
    "ctypes.",
    "os.chmod",
    "os.chown",
    "os.link",
    "os.symlink",
    "os.rename",
    "os.remove",
    "os.rmdir",
    "os.truncate",
    "os.listdir",
    "os.scandir",
    "shutil.",
    "sys.settrace",
    "sys.setprofile",
    "mmap.",
    "fcntl.",
)


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


def _install_guards(work_dir: str, builtins_ns: dict[str, Any]) -> None:
    import builtins

    real_import = builtins.__import__
    real_open = builtins.open
    root = os.path.realpath(work_dir)
    library = tuple(os.path.realpath(p) + os.sep for p in sys.path if p and os.path.isdir(p))
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def library_read(path: Any, mode: Any, flags: Any) -> bool:
        """Read-only opens of the standard library (lazy imports) pass; nothing else outside /work."""
        if not isinstance(path, str) or not os.path.realpath(path).startswith(library):
            return False
        if isinstance(mode, str):
            return not any(c in mode for c in "wax+")
        return isinstance(flags, int) and not flags & write_flags

    def inside(path: Any) -> bool:
        if isinstance(path, bytes):
            path = path.decode(errors="replace")
        if not isinstance(path, str):
            return False
        full = os.path.realpath(os.path.join(root, path))
        return full == root or full.startswith(root + os.sep)

    def guarded_import(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if level == 0 and (globals or {}).get("__name__") == "__sandbox__":
            wanted = [name] + [f"{name}.{item}" for item in (fromlist or ()) if item != "*"]
            for full in wanted:
                top_ok = full in ALLOWED_IMPORTS or any(full.startswith(a + ".") for a in ALLOWED_IMPORTS)
                if not top_ok and not (
                    fromlist and full == name and any(w in ALLOWED_IMPORTS for w in wanted[1:])
                ):
                    raise ImportError(f"Import of module '{full}' is not allowed in the sandbox")
        return real_import(name, globals, locals, fromlist, level)

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if not inside(file):
            raise PermissionError(f"File access outside the sandbox work dir is not allowed: {file!r}")
        return real_open(file, mode, *args, **kwargs)

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event in ("os.listdir", "os.scandir") and args:
            # the import system lists package directories of the standard library
            target = args[0] if isinstance(args[0], str) else None
            if target is not None and (inside(target) or library_read(target, "r", 0)):
                return
        if event == "open":
            if not inside(args[0]) and not library_read(*args[:3]):
                raise PermissionError(f"File access outside the sandbox work dir is not allowed: {args[0]!r}")
            return
        if event.startswith(BLOCKED_EVENTS):
            raise PermissionError(f"Operation '{event}' is not allowed in the sandbox")

    for name in REMOVED_BUILTINS:
        builtins_ns.pop(name, None)
    builtins_ns["__import__"] = guarded_import
    builtins_ns["open"] = guarded_open
    sys.addaudithook(audit)


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
    import builtins

    _send({"type": "ready"})
    job = json.loads(sys.stdin.readline() or "{}")
    variables = job.get("variables") or {}
    log = _Log(int(cfg["output_bytes"]))
    helpers = _Helpers(int(cfg["max_requests"]))
    safe_builtins = dict(vars(builtins))
    safe_builtins["print"] = log.print
    env: dict[str, Any] = {
        "__name__": "__sandbox__",
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
    if isinstance(variables, dict):
        env.update({k: v for k, v in variables.items() if isinstance(k, str) and k.isidentifier()})
    try:
        code = compile(job.get("code", ""), "<sandbox>", "exec")
        if cfg.get("guards", True):
            _install_guards(cfg["work_dir"], safe_builtins)
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
