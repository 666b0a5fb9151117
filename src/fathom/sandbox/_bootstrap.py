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


# seccomp: a small classic-BPF syscall filter (no dependency). Every process of the run inherits it.
_SECCOMP_ARCH = {  # machine -> (AUDIT_ARCH, execve, execveat, other refused syscalls)
    "x86_64": (
        0xC000003E,
        59,
        322,
        # ptrace mount umount2 pivot_root chroot unshare setns keyctl add_key request_key bpf
        # perf_event_open kexec_load kexec_file_load init_module finit_module delete_module reboot
        # swapon swapoff userfaultfd process_vm_readv process_vm_writev open_by_handle_at
        # name_to_handle_at acct iopl ioperm, new mount API (open_tree..fspick, mount_setattr), io_uring_*
        (101, 165, 166, 155, 161, 272, 308, 250, 248, 249, 321, 298, 246, 320, 175, 313, 176, 169)
        + (
            167,
            168,
            323,
            310,
            311,
            304,
            303,
            163,
            172,
            173,
            428,
            429,
            430,
            431,
            432,
            433,
            442,
            425,
            426,
            427,
        ),
    ),
    "aarch64": (
        0xC00000B7,
        221,
        281,
        (117, 40, 39, 41, 51, 97, 268, 219, 217, 218, 280, 241, 104, 294, 105, 273, 106, 142)
        + (224, 225, 282, 270, 271, 265, 264, 89, 428, 429, 430, 431, 432, 433, 442, 425, 426, 427),
    ),
}
_EPERM = 0x00050001  # SECCOMP_RET_ERRNO | EPERM
_ALLOW = 0x7FFF0000
_KILL = 0x80000000  # SECCOMP_RET_KILL_PROCESS
EXEC_FD = 1000  # the only descriptor execveat may run (Node's start); unreachable under RLIMIT_NOFILE


def seccomp_program(machine: str, exec_fd: int | None) -> list[tuple[int, int, int, int]]:
    """The filter as ``(code, jt, jf, k)``: no execve; execveat only on ``exec_fd``; no namespace,
    mount, ptrace, keyring, bpf or module syscalls. Other architectures' syscalls kill the process."""
    arch, execve, execveat, refused = _SECCOMP_ARCH[machine]
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    prog: list[tuple[int, int, int, int]] = [
        (ld, 0, 0, 4),
        (jeq, 1, 0, arch),
        (ret, 0, 0, _KILL),
        (ld, 0, 0, 0),
    ]
    checks: list[tuple[int, int]] = [(jge, 0x40000000)] if machine == "x86_64" else []  # x32 ABI
    checks += [(jeq, execve)] + [(jeq, nr) for nr in refused]
    if exec_fd is None:
        checks.append((jeq, execveat))
    allow = len(prog) + len(checks) + (3 if exec_fd is not None else 0)
    deny = allow + 1
    for code, k in checks:
        prog.append((code, deny - len(prog) - 1, 0, k))
    if exec_fd is not None:  # execveat(fd == exec_fd, ...) passes, any other execveat is refused
        prog.append((jeq, 0, 2, execveat))
        prog.append((ld, 0, 0, 16))  # args[0], low 32 bits
        prog.append((jeq, allow - len(prog) - 1, deny - len(prog) - 1, exec_fd))
    prog += [(ret, 0, 0, _ALLOW), (ret, 0, 0, _EPERM)]
    return prog


def _install_seccomp(exec_fd: int | None) -> None:
    import ctypes

    machine = os.uname().machine
    if machine not in _SECCOMP_ARCH:
        raise OSError(f"no seccomp filter for the machine type {machine!r}")
    prog = seccomp_program(machine, exec_fd)

    class SockFilter(ctypes.Structure):
        _fields_ = [
            ("code", ctypes.c_ushort),
            ("jt", ctypes.c_ubyte),
            ("jf", ctypes.c_ubyte),
            ("k", ctypes.c_uint),
        ]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    filters = (SockFilter * len(prog))(*(SockFilter(*ins) for ins in prog))
    fprog = SockFprog(len(prog), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    # PR_SET_SECCOMP, SECCOMP_MODE_FILTER (needs no_new_privs or CAP_SYS_ADMIN)
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


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
        exec(compile(cfg["py_guards"], "<fathom-sandbox-guards>", "exec"), runner)
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
    exec_fd = None
    if cfg["language"] == "javascript":  # kept open above RLIMIT_NOFILE, closed by the exec
        if int(cfg["open_files"]) >= EXEC_FD:
            raise OSError(f"open_files must stay below {EXEC_FD}")
        opened = os.open(cfg["node"], os.O_RDONLY | os.O_CLOEXEC)
        exec_fd = os.dup2(opened, EXEC_FD, inheritable=False)
        os.close(opened)
    _apply_limits(cfg)
    if cfg.get("no_new_privs", True):
        _no_new_privs()
    _drop_privileges(cfg)
    if cfg.get("seccomp", True):
        _install_seccomp(exec_fd)
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
        os.execve(exec_fd if exec_fd is not None else node, [*args, "-e", cfg["js_runner"]], env)
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
