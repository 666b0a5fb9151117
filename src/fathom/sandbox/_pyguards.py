"""Language guards of the Python sandbox (defence in depth: the OS layer is the boundary).

Standard library only; never imports fathom. ``_bootstrap.py`` executes this source in the runner's
namespace before ``_pyrunner.py``. What the guards do, all checked by ``tests/sandbox/test_escapes.py``:

- imports: only :data:`ALLOWED_IMPORTS`, whatever the caller (``import x``, ``__import__('x')``);
  imported modules are *views*: public names only, and a module attribute only when that module is
  itself allowed (``random._os``, ``typing.sys``, ``uuid.os`` do not exist);
- attributes: code (and any source compiled later, e.g. by ``typing``) may not name a dunder outside
  :data:`ALLOWED_DUNDERS` (``__subclasses__``, ``__globals__``, ``__builtins__``, ``__code__`` ...) nor a
  frame/code attribute; ``getattr``/``hasattr``/``setattr``/``delattr``/``operator.attrgetter``/
  ``operator.methodcaller`` apply the same rule;
- an audit hook (which code cannot remove) refuses process, socket, ctypes, gc-introspection and
  frame access events, imports of :data:`DENIED_IMPORTS` by anyone, and opens outside the work dir.
"""

from __future__ import annotations

import ast
import os
import sys
from types import ModuleType
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
# Modules nobody may load once the guards are on (the standard library falls back where it can).
DENIED_IMPORTS = frozenset(
    [
        "ctypes",
        "_ctypes",
        "_posixsubprocess",
        "subprocess",
        "socket",
        "_socket",
        "ssl",
        "_ssl",
        "mmap",
        "fcntl",
        "pty",
        "termios",
        "resource",
        "multiprocessing",
        "_multiprocessing",
        "_posixshmem",
        "_xxsubinterpreters",
    ]
)
ALLOWED_DUNDERS = frozenset(
    [
        "__init__",
        "__new__",
        "__name__",
        "__qualname__",
        "__doc__",
        "__class__",
        "__module__",
        "__annotations__",
        "__slots__",
        "__post_init__",
        "__setattr__",
        "__delattr__",
        "__len__",
        "__iter__",
        "__next__",
        "__enter__",
        "__exit__",
        "__str__",
        "__repr__",
        "__format__",
        "__hash__",
        "__bool__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__contains__",
        "__getitem__",
        "__setitem__",
        "__delitem__",
        "__call__",
        "__add__",
        "__sub__",
        "__mul__",
        "__truediv__",
        "__floordiv__",
        "__mod__",
        "__pow__",
        "__neg__",
        "__pos__",
        "__abs__",
        "__and__",
        "__or__",
        "__xor__",
        "__int__",
        "__float__",
        "__index__",
    ]
)
FRAME_ATTRIBUTES = frozenset(
    [
        "tb_frame",
        "tb_next",
        "f_back",
        "f_globals",
        "f_locals",
        "f_builtins",
        "f_code",
        "f_trace",
        "gi_frame",
        "gi_code",
        "cr_frame",
        "cr_code",
        "ag_frame",
        "ag_code",
        "co_code",
    ]
)
BLOCKED_EVENTS = (
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.killpg",
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
    "os.putenv",
    "os.unsetenv",
    "subprocess.Popen",
    "_posixsubprocess",
    "socket.",
    "ctypes.",
    "shutil.",
    "gc.",
    "sys._current_frames",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    "code.__new__",
    "function.__new__",
    "mmap.",
    "fcntl.",
)


def attribute_allowed(name: object) -> bool:
    """Whether sandboxed code may read, write or delete the attribute ``name``."""
    if not isinstance(name, str):
        return True
    if name in FRAME_ATTRIBUTES:
        return False
    return not (name.startswith("__") and name.endswith("__")) or name in ALLOWED_DUNDERS


def _refuse_attribute(name: str) -> None:
    raise PermissionError(f"Access to attribute '{name}' is not allowed in the sandbox")


# Sources compiled while the code runs (typing's forward references, dataclass and namedtuple
# methods) are evaluated with whatever builtins their globals carry, possibly the real ones: they may
# not name these at all.
RUNTIME_DENIED_NAMES = frozenset(
    [
        "__import__",
        "__builtins__",
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "eval",
        "exec",
        "compile",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "input",
        "help",
        "open",
    ]
)


def check_source(tree: Any, *, runtime: bool = False) -> None:
    """Refuse code that names a forbidden attribute (``x.__subclasses__``, ``case C(__globals__=g)``);
    ``runtime``: a source compiled while the code runs, which may not name a powerful builtin either."""
    if isinstance(tree, bytes | str):
        try:
            tree = ast.parse(tree)
        except (SyntaxError, ValueError):
            return  # compiling it raises the error itself
    if not isinstance(tree, ast.AST):
        return
    if runtime:
        _check_names(tree, frozenset())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not attribute_allowed(node.attr):
            _refuse_attribute(node.attr)
        if isinstance(node, ast.MatchClass):
            for name in node.kwd_attrs:
                if not attribute_allowed(name):
                    _refuse_attribute(name)


def _check_names(node: ast.AST, bound: frozenset[str]) -> None:
    """Refuse loads of :data:`RUNTIME_DENIED_NAMES` not bound as a parameter of an enclosing function
    (namedtuple's generated ``lambda _cls, locals: ...`` is fine; its defaults are the outer scope's)."""
    if isinstance(node, ast.Name) and node.id in RUNTIME_DENIED_NAMES and node.id not in bound:
        raise PermissionError(f"Use of '{node.id}' is not allowed in code compiled in the sandbox")
    if isinstance(node, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef):
        params = node.args
        for default in [*params.defaults, *(d for d in params.kw_defaults if d is not None)]:
            _check_names(default, bound)
        every = [*params.posonlyargs, *params.args, *params.kwonlyargs, params.vararg, params.kwarg]
        inner = bound | {a.arg for a in every if a is not None}
        body = node.body if isinstance(node.body, list) else [node.body]
        others = [*body] if isinstance(node, ast.Lambda) else [*node.decorator_list, *body]
        for child in others:
            _check_names(child, inner)
        return
    for child in ast.iter_child_nodes(node):
        _check_names(child, bound)


def import_allowed(full: str) -> bool:
    return full in ALLOWED_IMPORTS or any(full.startswith(a + ".") for a in ALLOWED_IMPORTS)


class ModuleViews:
    """Module *views* handed to sandboxed code: public names only, allowed submodules as views."""

    def __init__(self) -> None:
        self._views: dict[str, ModuleType] = {}

    def view(self, module: ModuleType, *, refresh: bool = False) -> ModuleType:
        name = module.__name__
        view = self._views.get(name)
        if view is not None and not refresh:
            return view
        if view is None:
            view = self._views[name] = ModuleType(name, getattr(module, "__doc__", None))
        public = view.__dict__
        for key, value in list(vars(module).items()):
            if key.startswith("_"):
                continue
            if isinstance(value, ModuleType):
                if not import_allowed(value.__name__):
                    continue
                value = self.view(value)
            elif (name, key) in _HIDDEN:
                continue
            public[key] = value
        if name == "operator":
            public["attrgetter"] = _checked_attrgetter
            public["methodcaller"] = _checked_methodcaller
        return view


_HIDDEN = {("string", "Formatter")}  # Formatter.get_field reads any attribute path


def _checked_attrgetter(*names: str) -> Any:
    import operator

    for dotted in names:
        for part in str(dotted).split("."):
            if not attribute_allowed(part):
                _refuse_attribute(part)
    return operator.attrgetter(*names)


def _checked_methodcaller(name: str, *args: Any, **kwargs: Any) -> Any:
    import operator

    if not attribute_allowed(name):
        _refuse_attribute(name)
    return operator.methodcaller(name, *args, **kwargs)


def install_guards(work_dir: str, builtins_ns: dict[str, Any], env: dict[str, Any]) -> None:
    """Guard the code's builtins and globals, drop denied modules, add the audit hook (irreversible)."""
    import builtins

    real_import = builtins.__import__
    real_open = builtins.open
    real_getattr, real_setattr, real_delattr = getattr, setattr, delattr
    views = ModuleViews()
    parsing: list[bool] = []
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
        """The code's ``__import__`` (also when called directly): allowed modules, as views."""
        if level != 0:
            raise ImportError("Relative imports are not allowed in the sandbox")
        wanted = [name] + [f"{name}.{item}" for item in (fromlist or ()) if item != "*"]
        for full in wanted:
            if not import_allowed(full) and not (
                fromlist and full == name and any(import_allowed(w) for w in wanted[1:])
            ):
                raise ImportError(f"Import of module '{full}' is not allowed in the sandbox")
        module = real_import(name, None, None, fromlist, 0)
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # `import a.b` binds `a`, whose view must now show `b`
            loaded = sys.modules.get(".".join(parts[:i]))
            if loaded is not None:
                views.view(loaded, refresh=True)
        return views.view(module)

    def guarded_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if not inside(file):
            raise PermissionError(f"File access outside the sandbox work dir is not allowed: {file!r}")
        return real_open(file, mode, *args, **kwargs)

    def guarded_getattr(obj: Any, name: str, *default: Any) -> Any:
        if not attribute_allowed(name):
            _refuse_attribute(name)
        return real_getattr(obj, name, *default)

    def guarded_hasattr(obj: Any, name: str) -> bool:
        if not attribute_allowed(name):
            _refuse_attribute(name)
        return hasattr(obj, name)

    def guarded_setattr(obj: Any, name: str, value: Any) -> None:
        if not attribute_allowed(name):
            _refuse_attribute(name)
        real_setattr(obj, name, value)

    def guarded_delattr(obj: Any, name: str) -> None:
        if not attribute_allowed(name):
            _refuse_attribute(name)
        real_delattr(obj, name)

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            if not inside(args[0]) and not library_read(*args[:3]):
                raise PermissionError(f"File access outside the sandbox work dir is not allowed: {args[0]!r}")
            return
        if event in ("os.listdir", "os.scandir") and args:
            # the import system lists package directories of the standard library
            target = args[0] if isinstance(args[0], str) else None
            if target is not None and (inside(target) or library_read(target, "r", 0)):
                return
        if event == "import":
            module = str(args[0]) if args else ""
            if module.partition(".")[0] in DENIED_IMPORTS:
                raise ImportError(f"Import of module '{module}' is not allowed in the sandbox")
            return
        if event == "compile":  # sources compiled at run time (typing's forward references ...)
            if args and not parsing:  # check_source's own ast.parse compiles too
                parsing.append(True)
                try:
                    check_source(args[0], runtime=True)
                finally:
                    parsing.clear()
            return
        if event == "object.__getattr__":
            if len(args) > 1 and isinstance(args[1], str) and args[1] in FRAME_ATTRIBUTES:
                _refuse_attribute(args[1])
            return
        if event.startswith(BLOCKED_EVENTS):
            raise PermissionError(f"Operation '{event}' is not allowed in the sandbox")

    for name in REMOVED_BUILTINS:
        builtins_ns.pop(name, None)
    builtins_ns.update(
        __import__=guarded_import,
        open=guarded_open,
        getattr=guarded_getattr,
        hasattr=guarded_hasattr,
        setattr=guarded_setattr,
        delattr=guarded_delattr,
    )
    for key, value in list(env.items()):  # the pre-imported json, math, time
        if isinstance(value, ModuleType):
            env[key] = views.view(value)
    for loaded in list(sys.modules):
        if loaded.partition(".")[0] in DENIED_IMPORTS:
            del sys.modules[loaded]
    sys.addaudithook(audit)
