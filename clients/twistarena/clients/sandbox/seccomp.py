"""The seccomp filter of a sandboxed program: a few system calls that no bot needs and
that reach into other processes or the kernel's shared state are refused.

Refused with EPERM: ``ptrace`` and ``process_vm_readv``/``writev`` (reading or
steering another process), ``perf_event_open``, ``bpf``, ``userfaultfd``
(kernel attack surface), and the key-management calls (``add_key``,
``request_key``, ``keyctl``: keyrings are shared per user). ``io_uring_*``
gets ENOSYS, which runtimes (libuv in Node) take as "fall back to threads".
A call made through another ABI (32-bit or x32 on x86-64) is refused whole, so
the table cannot be dodged by number. On an architecture not in the table the
sandbox runs without this filter (the namespaces and dropped capabilities still
apply) and says so once.
"""

from __future__ import annotations

import errno
import platform
import struct
from functools import cache

import structlog

log = structlog.get_logger("twistarena.sandbox")

# Classic BPF, as seccomp reads it (linux/filter.h, linux/seccomp.h, linux/audit.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_OFFSET_NR = 0
_OFFSET_ARCH = 4
_X32_BIT = 0x40000000

#: machine -> (audit arch, {syscall number: errno})
_TABLES: dict[str, tuple[int, dict[int, int]]] = {
    "x86_64": (0xC000003E, {
        101: errno.EPERM,   # ptrace
        310: errno.EPERM,   # process_vm_readv
        311: errno.EPERM,   # process_vm_writev
        298: errno.EPERM,   # perf_event_open
        321: errno.EPERM,   # bpf
        323: errno.EPERM,   # userfaultfd
        248: errno.EPERM,   # add_key
        249: errno.EPERM,   # request_key
        250: errno.EPERM,   # keyctl
        425: errno.ENOSYS,  # io_uring_setup
        426: errno.ENOSYS,  # io_uring_enter
        427: errno.ENOSYS,  # io_uring_register
    }),
    "aarch64": (0xC00000B7, {
        117: errno.EPERM,   # ptrace
        270: errno.EPERM,   # process_vm_readv
        271: errno.EPERM,   # process_vm_writev
        241: errno.EPERM,   # perf_event_open
        280: errno.EPERM,   # bpf
        282: errno.EPERM,   # userfaultfd
        217: errno.EPERM,   # add_key
        218: errno.EPERM,   # request_key
        219: errno.EPERM,   # keyctl
        425: errno.ENOSYS,  # io_uring_setup
        426: errno.ENOSYS,  # io_uring_enter
        427: errno.ENOSYS,  # io_uring_register
    }),
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


@cache
def program() -> bytes | None:
    """The filter for this machine (what ``bwrap --seccomp FD`` reads), or None."""
    machine = platform.machine()
    table = _TABLES.get(machine)
    if table is None:
        log.warning("no seccomp filter for this architecture; sandboxes run without one",
                    machine=machine)
        return None
    arch, refused = table
    denied = _op(_RET_K, _RET_ERRNO | errno.EPERM)
    ops = [_op(_LD_W_ABS, _OFFSET_ARCH),
           _op(_JEQ_K, arch, jt=1),           # our ABI: skip the refusal below
           denied,
           _op(_LD_W_ABS, _OFFSET_NR)]
    if machine == "x86_64":
        ops += [_op(_JGE_K, _X32_BIT, jf=1), denied]
    for number, code in refused.items():
        ops += [_op(_JEQ_K, number, jf=1), _op(_RET_K, _RET_ERRNO | code)]
    ops.append(_op(_RET_K, _RET_ALLOW))
    return b"".join(ops)
