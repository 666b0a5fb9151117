"""The escape table: each case is one run (one sandbox process); every one must fail.

``GUARDED`` (Python) and ``GUARDED_JS`` run with the language guards (the default): each escape
ends with the exact refusal.
``OS_LAYER`` runs with the guards off, as if code had got past them: the OS layer alone (seccomp,
no_new_privs, the dropped uid, the minimal root) still refuses. ``test_legitimate_code_still_works``
shows that the documented modules and helpers keep working under the same guards.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from sandbox_limits import FAST

from fathom.sandbox import SandboxRunner

pytestmark = pytest.mark.usefixtures("isolated")
NO_GUARDS = replace(FAST, language_guards=False)


def _refused(message: str) -> dict[str, Any]:
    return {"success": False, "message": message}


def _import(module: str) -> dict[str, Any]:
    return _refused(f"Import of module '{module}' is not allowed in the sandbox")


def _attribute(name: str) -> dict[str, Any]:
    return _refused(f"Access to attribute '{name}' is not allowed in the sandbox")


def _outside(path: str) -> dict[str, Any]:
    return _refused(f"File access outside the sandbox work dir is not allowed: {path!r}")


def _main(body: str, header: str = "") -> str:
    return header + "def main():\n" + "".join(f"    {line}\n" for line in body.split("\n"))


FORK_EXEC = (
    "ps = __import__('_posixsubprocess')\n"
    "return ps.fork_exec(['/usr/bin/id'], [b'/usr/bin/id'], True, (), None, None,"
    " -1, -1, -1, -1, -1, -1, -1, -1, False, False, None, None, None, -1, None, False)"
)
WRAP_CLOSE = (
    "w = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]\n"
    "return w.__init__.__globals__['system']('id')"
)

GUARDED: dict[str, tuple[str, dict[str, Any]]] = {
    # the cases of issue 13
    "__import__('os').getcwd()": (_main("return __import__('os').getcwd()"), _import("os")),
    "_posixsubprocess.fork_exec": (_main(FORK_EXEC), _import("_posixsubprocess")),
    "__import__('posix')": (_main("return __import__('posix').getcwd()"), _import("posix")),
    "_io.open outside the work dir": (
        _main("return __import__('_io').open('/etc/passwd').read()"),
        _import("_io"),
    ),
    "open('/etc/passwd')": (_main("return open('/etc/passwd').read()"), _outside("/etc/passwd")),
    "open('/proc/self/environ')": (
        _main("return open('/proc/self/environ').read()"),
        _outside("/proc/self/environ"),
    ),
    "open('../../etc/hostname')": (
        _main("return open('../../etc/hostname').read()"),
        _outside("../../etc/hostname"),
    ),
    # imports, however spelled
    "import os": ("import os\n" + _main("return os.system('id')"), _import("os")),
    "from os import path": ("from os import path\n" + _main("return 1"), _import("os")),
    "import subprocess": ("import subprocess\n" + _main("return 1"), _import("subprocess")),
    "import socket": ("import socket\n" + _main("return 1"), _import("socket")),
    "import ctypes": ("import ctypes\n" + _main("return 1"), _import("ctypes")),
    "__import__('_ctypes')": (_main("return str(__import__('_ctypes'))"), _import("_ctypes")),
    "import gc (gc.get_objects)": ("import gc\n" + _main("return len(gc.get_objects())"), _import("gc")),
    "import sys (sys._getframe)": ("import sys\n" + _main("return str(sys._getframe())"), _import("sys")),
    "import importlib": ("import importlib\n" + _main("return 1"), _import("importlib")),
    "import builtins": ("import builtins\n" + _main("return 1"), _import("builtins")),
    "relative import": (
        "from . import os\n" + _main("return 1"),
        _refused("Relative imports are not allowed in the sandbox"),
    ),
    # builtins.__import__ tricks
    "__builtins__['__import__']": (_main("return str(__builtins__['__import__']('os'))"), _import("os")),
    "json.__builtins__": (_main("return str(json.__builtins__)"), _attribute("__builtins__")),
    "getattr(json, '__builtins__')": (
        _main("return str(getattr(json, '__builtins__'))"),
        _attribute("__builtins__"),
    ),
    "eval": (_main("return eval('1')"), _refused("name 'eval' is not defined")),
    "exec": (_main("exec('x = 1')"), _refused("name 'exec' is not defined")),
    "compile": (_main("return compile('1', 'x', 'eval')"), _refused("name 'compile' is not defined")),
    # modules that hold os/sys: imported modules are views with public, allowed names only
    "random._os": (
        "import random\n" + _main("return random._os.getcwd()"),
        _refused("module 'random' has no attribute '_os'"),
    ),
    "typing.sys": (
        "import typing\n" + _main("return str(typing.sys)"),
        _refused("module 'typing' has no attribute 'sys'"),
    ),
    "uuid.os": (
        "import uuid\n" + _main("return uuid.os.getcwd()"),
        _refused("module 'uuid' has no attribute 'os'"),
    ),
    "json.__spec__.loader": (_main("return str(json.__spec__)"), _attribute("__spec__")),
    # __subclasses__ escapes and function internals
    "().__class__.__base__.__subclasses__()": (
        _main("return str(().__class__.__base__.__subclasses__())"),
        _attribute("__subclasses__"),
    ),
    "_wrap_close.__init__.__globals__": (_main(WRAP_CLOSE), _attribute("__globals__")),
    "type.__dict__['__subclasses__']": (
        _main("return str(type.__dict__['__subclasses__'](object))"),
        _attribute("__dict__"),
    ),
    "getattr(object, '__subclasses__')": (
        _main("return str(getattr(object, '__subclasses__')())"),
        _attribute("__subclasses__"),
    ),
    "operator.attrgetter('__globals__')": (
        "import operator\n" + _main("return str(operator.attrgetter('__globals__')(main))"),
        _attribute("__globals__"),
    ),
    "string.Formatter().get_field": (
        "import string\n" + _main("return str(string.Formatter().get_field('0.__globals__', (main,), {}))"),
        _refused("module 'string' has no attribute 'Formatter'"),
    ),
    "match object(__globals__=g)": (
        _main("match main:\n    case object(__globals__=g):\n        return str(g)"),
        _attribute("__globals__"),
    ),
    "typing forward reference eval": (
        "import typing\ndef f(x: '().__class__.__base__.__subclasses__()'): pass\n"
        + _main("return str(typing.get_type_hints(f))"),
        _attribute("__subclasses__"),
    ),
    "get_type_hints(globalns={}) evaluates with the real builtins": (
        "import typing\ndef f(x: \"__import__('os')\"): pass\n"
        + _main("return typing.get_type_hints(f, globalns={})['x'].getcwd()"),
        _refused("Use of '__import__' is not allowed in code compiled in the sandbox"),
    ),
    "ForwardRef._evaluate with own globals": (
        "import typing\n"
        + _main(
            "ref = typing.ForwardRef(\"getattr(main, '__glo' + 'bals__')\")\n"
            "return str(ref._evaluate({'main': main}, {}, frozenset()))"
        ),
        _refused("Use of 'getattr' is not allowed in code compiled in the sandbox"),
    ),
    "print.__self__ (runner globals)": (_main("return str(print.__self__)"), _attribute("__self__")),
    "SystemHelper.http_request.__func__": (
        _main("return str(SystemHelper.http_request.__func__)"),
        _attribute("__func__"),
    ),
    "FunctionType(main.__code__, {})": (
        _main("return str(type(main)(main.__code__, {}))"),
        _attribute("__code__"),
    ),
    # frame walking
    "exception.__traceback__.tb_frame": (
        _main(
            "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
            "    return str(e.__traceback__.tb_frame.f_back.f_globals)"
        ),
        _attribute("f_globals"),
    ),
    "generator.gi_frame.f_back": (
        _main("g = (x for x in [1])\nreturn str(g.gi_frame.f_back)"),
        _attribute("f_back"),
    ),
    "getattr(generator, 'gi_frame')": (
        _main("g = (x for x in [1])\nreturn str(getattr(g, 'gi_frame'))"),
        _attribute("gi_frame"),
    ),
}


@pytest.mark.parametrize("case", list(GUARDED))
async def test_guarded_python_escape_is_refused(case: str) -> None:
    code, expected = GUARDED[case]
    result = await SandboxRunner(FAST).run_python(code)
    assert result.to_wire() == expected


NO_CODEGEN = _refused("Code generation from strings disallowed for this context")
GUARDED_JS: dict[str, tuple[str, dict[str, Any]]] = {
    "this.constructor.constructor": (
        "function main() { return this.constructor.constructor('return process')().pid }",
        NO_CODEGEN,
    ),
    "outer-realm httpRequest.constructor": (
        "function main() { return httpRequest.constructor('return process')().pid }",
        NO_CODEGEN,
    ),
    "outer-realm setTimeout.constructor": (
        "function main() { return setTimeout.constructor('return process')().pid }",
        NO_CODEGEN,
    ),
    "outer-realm Promise from httpRequest": (
        "function main() { return SystemHelper.delay(0).constructor.constructor('return process')().pid }",
        NO_CODEGEN,
    ),
    "dynamic import('fs')": (
        "async function main() { return (await import('fs')).readFileSync('/etc/passwd', 'utf8') }",
        _refused("A dynamic import callback was not specified."),
    ),
    "require/process/Buffer": (
        "function main() { return [typeof require, typeof process, typeof Buffer, typeof module].join() }",
        {"success": True, "data": {"codeReturn": "undefined,undefined,undefined,undefined", "log": ""}},
    ),
}


@pytest.mark.parametrize("case", list(GUARDED_JS))
async def test_guarded_javascript_escape_is_refused(case: str) -> None:
    runner = SandboxRunner(FAST)
    if not runner.isolation.node:
        pytest.skip("node is not installed on this machine")
    code, expected = GUARDED_JS[case]
    assert (await runner.run_javascript(code)).to_wire() == expected


LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
OS_LAYER: dict[str, tuple[str, str, dict[str, Any]]] = {
    # execve is refused by seccomp, whatever reaches it
    "subprocess.run(['/usr/bin/id'])": (
        "python",
        "import subprocess\n" + _main("return subprocess.run(['/usr/bin/id']).returncode"),
        _refused("[Errno 1] Operation not permitted: '/usr/bin/id'"),
    ),
    "os.execv": (
        "python",
        "import os\n" + _main("os.execv('/usr/bin/id', ['id'])"),
        _refused("[Errno 1] Operation not permitted"),
    ),
    "os.posix_spawn": (
        "python",
        "import os\n"
        + _main("pid = os.posix_spawn('/usr/bin/id', ['id'], {})\nreturn os.waitpid(pid, 0)[1]"),
        _refused("[Errno 1] Operation not permitted: '/usr/bin/id'"),
    ),
    "ctypes execv": (
        "python",
        LIBC
        + _main(
            "argv = (ctypes.c_char_p * 2)(b'id', None)\n"
            "return [libc.execv(b'/usr/bin/id', argv), ctypes.get_errno()]"
        ),
        {"success": True, "data": {"codeReturn": [-1, 1], "log": ""}},
    ),
    # and so are ptrace, namespaces and mounts
    "ctypes ptrace(PTRACE_TRACEME)": (
        "python",
        LIBC + _main("return [libc.ptrace(0, 0, 0, 0), ctypes.get_errno()]"),
        {"success": True, "data": {"codeReturn": [-1, 1], "log": ""}},
    ),
    "ctypes unshare(CLONE_NEWUSER)": (
        "python",
        LIBC + _main("return [libc.unshare(0x10000000), ctypes.get_errno()]"),
        {"success": True, "data": {"codeReturn": [-1, 1], "log": ""}},
    ),
    "ctypes mount tmpfs": (
        "python",
        LIBC + _main("return [libc.mount(b'x', b'/work', b'tmpfs', 0, None), ctypes.get_errno()]"),
        {"success": True, "data": {"codeReturn": [-1, 1], "log": ""}},
    ),
    "node child_process.spawnSync": (
        "javascript",
        "function main() { return require('child_process').spawnSync('/usr/bin/id').error.code }",
        {"success": True, "data": {"codeReturn": "EPERM", "log": ""}},
    ),
    "node child_process.execSync": (
        "javascript",
        "function main() { return String(require('child_process').execSync('id')) }",
        _refused("spawnSync /bin/sh EPERM"),
    ),
}


@pytest.mark.parametrize("case", list(OS_LAYER))
async def test_os_layer_refuses_escape_without_guards(case: str) -> None:
    language, code, expected = OS_LAYER[case]
    runner = SandboxRunner(FAST)
    if language == "javascript" and not runner.isolation.node:
        pytest.skip("node is not installed on this machine")
    run = runner.run_python if language == "python" else runner.run_javascript
    assert (await run(code, limits=NO_GUARDS)).to_wire() == expected


LEGITIMATE = """
import base64, binascii, bisect, calendar, cmath, copy, csv, datetime, decimal, enum, fractions
import functools, hashlib, heapq, hmac, itertools, math, numbers, operator, random, re, statistics
import string, struct, textwrap, typing, unicodedata, uuid
import urllib.parse
import collections.abc as cabc
from collections import Counter, OrderedDict, namedtuple
from dataclasses import asdict, dataclass, field
from typing import NamedTuple, Optional
from urllib.parse import quote

@dataclass(frozen=True, order=True)
class Point:
    x: int
    y: "int" = 2
    tags: list = field(default_factory=list)

class Color(enum.Enum):
    RED = 1

class Pair(NamedTuple):
    a: int
    b: str = "b"

class Base:
    def __init__(self, v):
        self.v = v

class Child(Base):
    def __init__(self, v):
        super().__init__(v * 2)

def hinted(a: "Optional[int]") -> "int":
    return 1

def main(a, b=3):
    with open("note.txt", "w") as f:
        f.write("hi")
    print("log", a)
    return {
        "json": json.loads(json.dumps({"a": [1, 2]})), "math": math.sqrt(16), "time": time.time() > 0,
        "re": re.findall(r"[0-9]+", "a1b22"),
        "datetime": datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc).isoformat(),
        "statistics": statistics.mean([1, 2, 3]), "decimal": str(decimal.Decimal("1.10") * 2),
        "fractions": str(fractions.Fraction(1, 3)), "hashlib": hashlib.sha256(b"x").hexdigest()[:8],
        "hmac": hmac.new(b"k", b"m", "sha256").hexdigest()[:8], "base64": base64.b64encode(b"hi").decode(),
        "uuid": len(str(uuid.uuid4())) + len(str(uuid.uuid1())), "random": random.Random(1).randint(1, 10),
        "string": string.Template("$x").substitute(x=1), "textwrap": textwrap.shorten("hello world x", 10),
        "itertools": list(itertools.islice(itertools.count(), 3)),
        "functools": functools.reduce(operator.add, [1, 2, 3]), "attrgetter": operator.attrgetter("real")(3),
        "heapq": heapq.nsmallest(2, [3, 1, 2]), "bisect": bisect.bisect([1, 2, 3], 2),
        "csv": list(csv.reader(["a,b"])), "copy": copy.deepcopy({"a": [1]}),
        "struct": struct.pack("<I", 1).hex(),
        "calendar": calendar.isleap(2024), "cmath": str(cmath.sqrt(-1)), "unicodedata": unicodedata.name("a"),
        "binascii": binascii.hexlify(b"a").decode(), "numbers": isinstance(1, numbers.Number),
        "enum": Color.RED.name, "namedtuple": namedtuple("P", "x y")(1, 2)._replace(x=5).x,
        "NamedTuple": Pair(1)._asdict(), "dataclass": asdict(Point(1)), "order": Point(1) < Point(2),
        "hints": str(typing.get_type_hints(hinted)), "url": urllib.parse.quote("a b") + quote("c/d"),
        "abc": isinstance({}, cabc.Mapping),
        "collections": [list(OrderedDict(a=1)), Counter("aab").most_common(1)],
        "class": [Child(2).v, type(Child(1)).__name__, getattr(Child(1), "v")],
        "file": open("note.txt").read(), "args": [a, b], "helpers": [count_token("abcd"), str_to_base64("a")],
    }
"""
LEGITIMATE_RETURN = {
    "json": {"a": [1, 2]}, "math": 4.0, "time": True, "re": ["1", "22"],
    "datetime": "2024-01-02T00:00:00+00:00", "statistics": 2, "decimal": "2.20", "fractions": "1/3",
    "hashlib": "2d711642", "hmac": "b60090e3", "base64": "aGk=", "uuid": 72, "random": 3, "string": "1",
    "textwrap": "[...]", "itertools": [0, 1, 2], "functools": 6, "attrgetter": 3, "heapq": [1, 2],
    "bisect": 2,
    "csv": [["a", "b"]], "copy": {"a": [1]}, "struct": "01000000", "calendar": True, "cmath": "1j",
    "unicodedata": "LATIN SMALL LETTER A", "binascii": "61", "numbers": True, "enum": "RED", "namedtuple": 5,
    "NamedTuple": {"a": 1, "b": "b"}, "dataclass": {"x": 1, "y": 2, "tags": []}, "order": True,
    "hints": "{'a': typing.Optional[int], 'return': <class 'int'>}", "url": "a%20bc/d", "abc": True,
    "collections": [["a"], [["a", 2]]], "class": [4, "Child", 2], "file": "hi", "args": [1, 3],
    "helpers": [1, "YQ=="],
}  # fmt: skip


async def test_legitimate_code_still_works() -> None:
    runner = SandboxRunner(FAST)
    result = await runner.run_python(LEGITIMATE, {"a": 1})
    assert result.to_wire() == {"success": True, "data": {"codeReturn": LEGITIMATE_RETURN, "log": "log 1"}}
    js = (
        "function main({a}) { return {a, json: JSON.stringify({x: [1]}), max: Math.max(1, 2),"
        " date: new Date(0).toISOString(), re: 'a1b2'.match(/[0-9]/g), b64: strToBase64('a')} }"
    )
    if not runner.isolation.node:
        return
    result = await runner.run_javascript(js, {"a": 1})
    assert result.code_return == {
        "a": 1, "json": '{"x":[1]}', "max": 2, "date": "1970-01-01T00:00:00.000Z", "re": ["1", "2"],
        "b64": "YQ==",
    }  # fmt: skip


async def test_variables_cannot_replace_dunder_globals() -> None:
    code = (
        "def main(variables):\n    return [type(__builtins__).__name__, __name__, variables['__builtins__']]"
    )
    result = await SandboxRunner(FAST).run_python(code, {"__builtins__": {}, "__name__": "os"})
    assert result.code_return == ["dict", "__sandbox__", {}]
