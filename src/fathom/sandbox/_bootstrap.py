"""The program that runs INSIDE the sandbox (standard library only; never imports fathom).

The parent passes this file's source to ``python -I -S -c`` with one argument, a JSON launch config.
Inside the new network and PID namespaces it runs as namespace PID 1: it forks a worker and reaps
until the worker exits. The worker applies the resource limits, enters its work dir, drops to the run
uid, sets ``no_new_privs`` and then either execs Node with the JavaScript runner or runs the Python
runner (``_pyrunner.py``, passed in the config) under the language guards. Messages to the parent
are JSON lines on stdout; replies (``http_request`` results) come back as JSON lines on stdin.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import Any


def _apply_limits(cfg: dict[str, Any]) -> None:
    cpu = int(cfg["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    mem = int(cfg["memory_bytes"])
    # Node reserves large address ranges it never touches: cap its data segment instead.
    kind = resource.RLIMIT_DATA if cfg["language"] == "javascript" else resource.RLIMIT_AS
    resource.setrlimit(kind, (mem, mem))
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(cfg["file_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(cfg["open_files"]),) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NPROC, (int(cfg["processes"]),) * 2)


def _no_new_privs() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


def _drop_privileges(cfg: dict[str, Any]) -> None:
    uid = cfg.get("uid")
    if uid is None:
        return
    os.setgroups([])
    os.setgid(int(cfg["gid"]))
    os.setuid(int(uid))
    if os.getuid() != int(uid) or os.geteuid() != int(uid):
        raise OSError("could not drop privileges")


_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
ROOT_LINKS = ("bin", "lib", "lib64", "sbin")
DEVICES = ("null", "zero", "random", "urandom")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    enc = [None if v is None else v.encode() for v in (source, target, fstype, data)]
    if libc.mount(enc[0], enc[1], enc[2], ctypes.c_ulong(flags), enc[3]) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {source} on {target} failed: {os.strerror(errno)}")


def _bind(source: str, target: str, *, read_only: bool = True) -> None:
    _mount(source, target, None, _MS_BIND | _MS_REC)
    flags = _MS_REMOUNT | _MS_BIND | _MS_NOSUID | _MS_NODEV | (_MS_RDONLY if read_only else 0)
    _mount(None, target, None, flags)


def _enter_root(cfg: dict[str, Any]) -> None:
    """In the private mount namespace: build a minimal read-only root and chroot into it.

    The new root holds /usr (read-only), the merged-usr links, a few device nodes, a fresh /proc of
    the PID namespace, extra read-only binds (e.g. a Node install outside /usr) and the work dir
    as /work. Nothing else of the host filesystem (data dirs, /root, /home, /tmp, /etc) is visible.
    """
    root = cfg["root_dir"]
    previous_umask = os.umask(0o022)  # mount points must be traversable by the run uid
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0755")
    os.mkdir(f"{root}/usr")
    _bind("/usr", f"{root}/usr")
    for name in ROOT_LINKS:
        host = f"/{name}"
        if os.path.islink(host):
            os.symlink(os.readlink(host), f"{root}/{name}")
        elif os.path.isdir(host):
            os.mkdir(f"{root}/{name}")
            _bind(host, f"{root}/{name}")
    for extra in cfg.get("ro_binds") or []:
        os.makedirs(f"{root}{extra}", exist_ok=True)
        _bind(extra, f"{root}{extra}")
    for hidden in cfg.get("hide_dirs") or []:  # e.g. the interpreter's own site-packages
        if os.path.isdir(f"{root}{hidden}"):
            _mount("tmpfs", f"{root}{hidden}", "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_RDONLY, "size=4k")
    os.mkdir(f"{root}/dev")
    for dev in DEVICES:
        open(f"{root}/dev/{dev}", "w").close()
        _bind(f"/dev/{dev}", f"{root}/dev/{dev}", read_only=False)
    os.mkdir(f"{root}/proc")
    _mount("proc", f"{root}/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    os.mkdir(f"{root}/work")
    _bind(cfg["work_dir"], f"{root}/work", read_only=False)
    os.mkdir(f"{root}/tmp")
    os.chmod(f"{root}/tmp", 0o755)
    _mount(None, root, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
    os.chroot(root)
    os.umask(previous_umask)
    cfg["work_dir"] = "/work"


def _worker(cfg: dict[str, Any]) -> None:
    os.umask(0o077)
    import ctypes  # noqa: F401 - loaded while the standard library is still reachable

    runner: dict[str, Any] = {"__name__": "fathom_sandbox_pyrunner"}
    if cfg["language"] == "python":
        exec(compile(cfg["py_runner"], "<fathom-sandbox-runner>", "exec"), runner)
        if not cfg.get("stdlib_visible"):
            # Without the standard library bound into the sandbox root, import what code may use
            # now: after the uid drop the interpreter's files may be unreadable.
            for name in runner["PRELOAD"]:
                __import__(name)
    if cfg.get("root_dir"):
        _enter_root(cfg)
    os.chdir(cfg["work_dir"])
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "HOME": cfg["work_dir"], "LANG": "C.UTF-8", "TZ": "UTC"})
    os.environ["TMPDIR"] = cfg["work_dir"]
    _apply_limits(cfg)
    if cfg.get("no_new_privs", True):
        _no_new_privs()
    _drop_privileges(cfg)
    if cfg["language"] == "javascript":
        node = cfg["node"]
        heap_mb = max(16, int(cfg["memory_bytes"]) // (1024 * 1024) * 3 // 4)
        args = [node, f"--max-old-space-size={heap_mb}"]
        if cfg.get("guards", True):
            args.append("--disallow-code-generation-from-strings")
            # Node's permission model: no fs outside the work dir, no child processes, no workers.
            work = cfg["work_dir"].rstrip("/") + "/"
            args += ["--experimental-permission", "--no-warnings"]
            args += [f"--allow-fs-read={work}", f"--allow-fs-write={work}"]
        env = dict(os.environ)
        env["FATHOM_SANDBOX_CFG"] = json.dumps(
            {k: cfg[k] for k in ("output_bytes", "max_requests", "guards")}
        )
        os.execve(node, [*args, "-e", cfg["js_runner"]], env)
    runner["run_python"](cfg)


# ---------------------------------------------------------------------------------------------------


def _init(cfg: dict[str, Any]) -> None:
    """Namespace PID 1: fork the worker, reap every child, exit with the worker's status."""
    worker = os.fork()
    if worker == 0:
        try:
            _worker(cfg)
        except BaseException as exc:  # noqa: BLE001
            sys.stderr.write(f"fathom-sandbox: setup failed: {exc}\n")
            sys.stderr.flush()
            os._exit(70)
        sys.stdout.flush()
        os._exit(0)
    for fd in (0, 1):
        os.close(fd)
    status = 0
    while True:
        try:
            pid, raw = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == worker:
            status = raw
            break
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        sys.stderr.write(f"fathom-sandbox: worker killed by signal {sig}\n")
        sys.stderr.flush()
        os._exit(128 + sig)
    os._exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    _config = json.loads(sys.argv[1])
    if _config.get("fork_init", True):
        _init(_config)
    else:
        _worker(_config)
