"""The seccomp program is well formed for both machines it supports (x86_64 is also run for real by
the escape table; aarch64 is checked here only as a program: every jump lands inside it)."""

from __future__ import annotations

import pytest

from fathom.sandbox._bootstrap import _ALLOW, _EPERM, _KILL, EXEC_FD, seccomp_program

RET = 0x06


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
@pytest.mark.parametrize("exec_fd", [None, EXEC_FD])
def test_every_jump_lands_inside_the_program(machine: str, exec_fd: int | None) -> None:
    program = seccomp_program(machine, exec_fd)
    assert program[-2:] == [(RET, 0, 0, _ALLOW), (RET, 0, 0, _EPERM)]
    assert (RET, 0, 0, _KILL) in program
    for index, (code, jt, jf, _k) in enumerate(program):
        if code & 0x07 == 0x05:  # BPF_JMP
            assert index + 1 + max(jt, jf) < len(program)
            assert max(jt, jf) <= 255


def _target(program: list[tuple[int, int, int, int]], number: int) -> int:
    """Where the ``jeq number`` test jumps when it matches."""
    index = next(i for i, (code, _jt, _jf, k) in enumerate(program) if code == 0x15 and k == number)
    return index + 1 + program[index][1]


@pytest.mark.parametrize(("machine", "execve", "execveat"), [("x86_64", 59, 322), ("aarch64", 221, 281)])
def test_execve_is_refused_and_execveat_only_on_the_node_descriptor(
    machine: str, execve: int, execveat: int
) -> None:
    without = seccomp_program(machine, None)
    assert without[_target(without, execve)] == (RET, 0, 0, _EPERM)
    assert without[_target(without, execveat)] == (RET, 0, 0, _EPERM)
    with_fd = seccomp_program(machine, EXEC_FD)
    assert with_fd[_target(with_fd, execve)] == (RET, 0, 0, _EPERM)
    jeq = _target(with_fd, execveat) - 1  # a match falls through to "load args[0]"
    assert with_fd[jeq + 1] == (0x20, 0, 0, 16)
    fd_check = with_fd[jeq + 2]
    assert fd_check[3] == EXEC_FD
    assert with_fd[jeq + 3 + fd_check[1]] == (RET, 0, 0, _ALLOW)
    assert with_fd[jeq + 3 + fd_check[2]] == (RET, 0, 0, _EPERM)
