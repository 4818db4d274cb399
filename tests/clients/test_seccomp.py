"""The seccomp filter, read as the kernel reads it: a small classic-BPF interpreter runs
the program ``seccomp.program`` hands bubblewrap on the calls a program could make,
for every machine it has a table for. So what is refused is refused by the filter
itself, whatever the kernel or its settings would have answered."""

from __future__ import annotations

import errno
import socket
import struct

import pytest
from twistarena.sandbox import seccomp
from twistarena.sandbox.syscall_numbers import NUMBERS

ALLOW = 0x7FFF0000
ERRNO = 0x00050000
ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


def run_filter(program: bytes, arch: int, nr: int, arg0: int = 0) -> int:
    """What the filter returns for one call (seccomp_data: nr, arch, ip, args)."""
    data = struct.pack("=IIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    ops = [struct.unpack("=HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    assert len(ops) <= 4096
    pc, a = 0, 0
    while True:
        code, jt, jf, k = ops[pc]
        if code == 0x20:  # LD W ABS
            a = struct.unpack_from("=I", data, k)[0]
        elif code == 0x06:  # RET K
            return k
        else:
            taken = {0x15: a == k, 0x25: a > k, 0x35: a >= k}[code]
            pc += jt if taken else jf
        pc += 1


@pytest.fixture(params=sorted(NUMBERS))
def machine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def verdict(machine: str, name: str, arg0: int = 0) -> int:
    program = seccomp.program(machine)
    assert program is not None
    return run_filter(program, ARCH[machine], NUMBERS[machine][name], arg0)


@pytest.mark.parametrize("name", ["keyctl", "add_key", "request_key", "bpf", "perf_event_open",
                                  "userfaultfd", "ptrace", "process_vm_readv",
                                  "process_vm_writev"])
def test_kernel_and_process_reaching_calls_are_refused_by_name(machine: str, name: str) -> None:
    assert verdict(machine, name) == ERRNO | errno.EPERM


@pytest.mark.parametrize("name", ["io_uring_setup", "io_uring_enter", "io_uring_register"])
def test_io_uring_looks_absent_so_runtimes_fall_back(machine: str, name: str) -> None:
    assert verdict(machine, name) == ERRNO | errno.ENOSYS


def test_only_local_ip_and_netlink_sockets_open(machine: str) -> None:
    for name in ("socket", "socketpair"):
        for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK):
            assert verdict(machine, name, family) == ALLOW
        for family in (40, socket.AF_PACKET, 38, 31):  # vsock, packet, alg, bluetooth
            assert verdict(machine, name, family) == ERRNO | errno.EAFNOSUPPORT


def test_what_is_not_on_the_allowlist_is_refused(machine: str) -> None:
    program = seccomp.program(machine)
    assert program is not None
    numbers = NUMBERS[machine]
    for name in ("read", "write", "mmap", "futex", "clone", "execve", "exit_group", "wait4"):
        assert verdict(machine, name) == ALLOW
    known = set(numbers.values())
    # Numbers of calls the list does not name (kcmp, mount, unshare, setns, kexec ...).
    for nr in [n for n in range(0, 470) if n not in known]:
        assert run_filter(program, ARCH[machine], nr) == ERRNO | errno.ENOSYS, nr
    assert run_filter(program, ARCH[machine], 0xFFFF) == ERRNO | errno.ENOSYS


def test_another_abi_is_refused_whole() -> None:
    program = seccomp.program("x86_64")
    assert program is not None
    read = NUMBERS["x86_64"]["read"]
    assert run_filter(program, ARCH["x86_64"], read | 0x40000000) == ERRNO | errno.EPERM
    assert run_filter(program, 0x40000003, 3) == ERRNO | errno.EPERM  # i386 read
