"""The seccomp filter of a sandboxed program: an allowlist of the system calls that
programs in the starter languages (C, Go, Java, JavaScript on Node, Python, Rust)
and their builds make; every other call is refused.

A call not in ``ALLOWED`` fails with ENOSYS, as on a kernel that lacks it, so a
runtime that tries a newer call first (``clone3``, ``io_uring_*`` in libuv) falls
back to an older one. The calls that reach into other processes or the kernel's
shared state are refused by name with EPERM (``REFUSED``): ``ptrace`` and
``process_vm_readv``/``writev``, ``perf_event_open``, ``bpf``, ``userfaultfd``
and the keyrings (``add_key``, ``request_key``, ``keyctl``); ``io_uring_*`` by
name with ENOSYS. Sockets are checked on their family: local (AF_UNIX), IP and
netlink (which ``if_nameindex`` and the resolver use) only; any other (AF_VSOCK
to the hypervisor, AF_PACKET, AF_ALG ...) gets EAFNOSUPPORT. Mounts, namespaces,
module loading, kexec, reboot, swap, the clock, ``syslog``, ``kcmp`` and the like
are simply not allowed.

A call made through another ABI (32-bit or x32 on x86-64) is refused whole, so
the table cannot be dodged by number. On an architecture not in
``syscall_numbers`` the sandbox runs without this filter (the namespaces and the
dropped capabilities still apply) and says so once.
"""

from __future__ import annotations

import errno
import platform
import socket
import struct
from collections.abc import Iterable
from functools import cache

import structlog

from .syscall_numbers import NUMBERS

log = structlog.get_logger("twistarena.sandbox")



def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Allowed whatever their arguments (on a machine that has them).
ALLOWED = _names("""
    accept accept4 access alarm arch_prctl bind brk capget capset chdir chmod chown
    clock_getres clock_gettime clock_nanosleep clone close close_range connect
    copy_file_range creat dup dup2 dup3 epoll_create epoll_create1 epoll_ctl epoll_pwait
    epoll_pwait2 epoll_wait eventfd eventfd2 execve execveat exit exit_group faccessat
    faccessat2 fadvise64 fallocate fchdir fchmod fchmodat fchmodat2 fchown fchownat fcntl
    fdatasync fgetxattr flistxattr flock fork fremovexattr fsetxattr fstat fstatfs fsync
    ftruncate futex futex_waitv futimesat getcpu getcwd getdents getdents64 getegid geteuid
    getgid getgroups getitimer getpeername getpgid getpgrp getpid getppid getpriority
    getrandom getresgid getresuid getrlimit get_robust_list getrusage getsid getsockname
    getsockopt gettid gettimeofday getuid getxattr inotify_add_watch inotify_init
    inotify_init1 inotify_rm_watch io_cancel io_destroy io_getevents io_pgetevents io_setup
    io_submit ioctl ioprio_get ioprio_set kill lchown lgetxattr link linkat listen listxattr
    llistxattr lremovexattr lseek lsetxattr lstat madvise membarrier memfd_create mincore
    mkdir mkdirat mknod mknodat mlock mlock2 mlockall mmap mprotect mq_getsetattr mq_notify
    mq_open mq_timedreceive mq_timedsend mq_unlink mremap msgctl msgget msgrcv msgsnd msync
    munlock munlockall munmap nanosleep newfstatat open openat openat2 pause personality
    pidfd_open pidfd_send_signal pipe pipe2 poll ppoll prctl pread64 preadv preadv2
    prlimit64 pselect6 pwrite64 pwritev pwritev2 read readahead readlink readlinkat readv
    recvfrom recvmmsg recvmsg removexattr rename renameat renameat2 restart_syscall rmdir
    rseq rt_sigaction rt_sigpending rt_sigprocmask rt_sigqueueinfo rt_sigreturn
    rt_sigsuspend rt_sigtimedwait rt_tgsigqueueinfo sched_get_priority_max
    sched_get_priority_min sched_getaffinity sched_getattr sched_getparam sched_getscheduler
    sched_rr_get_interval sched_setaffinity sched_setattr sched_setparam sched_setscheduler
    sched_yield seccomp select semctl semget semop semtimedop sendfile sendmmsg sendmsg
    sendto set_robust_list set_tid_address setfsgid setfsuid setgid setgroups setitimer
    setpgid setpriority setregid setresgid setresuid setreuid setrlimit setsid setsockopt
    setuid setxattr shmat shmctl shmdt shmget shutdown sigaltstack signalfd signalfd4 splice
    stat statfs statx symlink symlinkat sync sync_file_range syncfs sysinfo tee tgkill time
    timer_create timer_delete timer_getoverrun timer_gettime timer_settime timerfd_create
    timerfd_gettime timerfd_settime times tkill truncate umask uname unlink unlinkat utime
    utimensat utimes vfork vmsplice wait4 waitid write writev
""")

#: Refused by name (whatever else changes in the list above), with this errno.
REFUSED: dict[str, int] = {
    **dict.fromkeys(("ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open",
                     "bpf", "userfaultfd", "add_key", "request_key", "keyctl"), errno.EPERM),
    **dict.fromkeys(("io_uring_setup", "io_uring_enter", "io_uring_register"), errno.ENOSYS),
}

#: The calls allowed for these socket families only (their first argument).
SOCKET_CALLS = ("socket", "socketpair")
SOCKET_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK)

#: machine -> its audit architecture (linux/audit.h).
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# Classic BPF, as seccomp reads it (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGT_K = 0x25
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_OFFSET_NR = 0
_OFFSET_ARCH = 4
#: The low 32 bits of the first argument (both machines are little-endian).
_OFFSET_ARG0 = 16
_X32_BIT = 0x40000000


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _refuse(code: int) -> bytes:
    return _op(_RET_K, _RET_ERRNO | code)


def _ranges(numbers: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted numbers as runs of consecutive ones: fewer comparisons per call."""
    runs: list[tuple[int, int]] = []
    for number in sorted(numbers):
        if runs and runs[-1][1] == number - 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


@cache
def program(machine: str | None = None) -> bytes | None:
    """The filter for this machine (what ``bwrap --seccomp FD`` reads), or None."""
    machine = machine or platform.machine()
    numbers = NUMBERS.get(machine)
    if numbers is None or machine not in AUDIT_ARCH:
        log.warning("no seccomp filter for this architecture; sandboxes run without one",
                    machine=machine)
        return None
    allow = _op(_RET_K, _RET_ALLOW)
    ops = [_op(_LD_W_ABS, _OFFSET_ARCH),
           _op(_JEQ_K, AUDIT_ARCH[machine], jt=1),  # our ABI: skip the refusal below
           _refuse(errno.EPERM),
           _op(_LD_W_ABS, _OFFSET_NR)]
    if machine == "x86_64":
        ops += [_op(_JGE_K, _X32_BIT, jf=1), _refuse(errno.EPERM)]
    for name, code in REFUSED.items():
        ops += [_op(_JEQ_K, numbers[name], jf=1), _refuse(code)]
    families = [_op(_LD_W_ABS, _OFFSET_ARG0)]
    for family in SOCKET_FAMILIES:
        families += [_op(_JEQ_K, family, jf=1), allow]
    families.append(_refuse(errno.EAFNOSUPPORT))
    for name in SOCKET_CALLS:
        ops += [_op(_JEQ_K, numbers[name], jf=len(families)), *families]
    for low, high in _ranges(numbers[name] for name in ALLOWED if name in numbers):
        if low == high:
            ops += [_op(_JEQ_K, low, jf=1), allow]
        else:
            ops += [_op(_JGE_K, low, jf=2), _op(_JGT_K, high, jt=1), allow]
    ops.append(_refuse(errno.ENOSYS))
    return b"".join(ops)
