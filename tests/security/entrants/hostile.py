"""A hostile entrant: a bot program that tries to break out of its sandbox, then plays.

``python3 hostile.py MODE CONFIG_JSON`` (the system's Python, stdlib only):

- ``quiet``: every attempt of ``ATTEMPTS`` at start-up, each reported as one line
  ``HOSTILE {"attempt": ..., "succeeded": ..., "detail": ...}`` on stderr (the
  bridge keeps the end of stderr against the entrant), then the first legal
  action of every decision;
- ``stdout``: answers every decision with an endless line (1 GiB, no newline);
- ``stderr``: writes 1 GiB to stderr at start-up, then plays;
- ``forkbomb``: forks until refused at its first decision, and never answers;
- ``silent``: never answers;
- ``burn``: at its first decision leaves 6 processes spinning, and answers every
  decision at once.

Every mode says ``HOSTILE started`` on stderr when it starts (the tests count its
starts from the stderr tail, which the bridge keeps across restarts).

"succeeded" is the program's own view; the tests check the host's side too.
"""

import ctypes
import errno
import json
import os
import platform
import resource
import signal
import socket
import sys
import time

MODE = sys.argv[1]
CONFIG = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
GIB = 1 << 30
CHUNK = b"x" * (1 << 20)


def report(attempt, succeeded, detail):
    line = json.dumps({"attempt": attempt, "succeeded": succeeded, "detail": detail})
    print("HOSTILE " + line, file=sys.stderr, flush=True)


def try_read(path):
    """The first bytes of a file, the entries of a folder, or the error."""
    try:
        if os.path.isdir(path):
            return "listed", sorted(os.listdir(path))[:20]
        with open(path, "rb") as f:
            return "read", f.read(4096).decode(errors="replace")
    except OSError as error:
        return "refused", f"{type(error).__name__}: {error.strerror}"


def read_other_entrant():
    seen = {p: try_read(p) for p in CONFIG["victim_paths"]}
    # Climbing out of our own folder reaches the sandbox's root, not the host's.
    seen["/bot/../.."] = try_read("/bot/../..")
    leaked = [p for p, (how, what) in seen.items()
              if how == "read" and CONFIG["victim_marker"] in what]
    report("read_other_entrant", bool(leaked), seen)


def read_host_paths():
    seen = {p: try_read(p) for p in CONFIG["host_paths"]}
    opened = [p for p, (how, _) in seen.items() if how != "refused"]
    report("read_host_paths", bool(opened), seen)


def write_files():
    """Change the other entrant's and the host's files, or make new ones anywhere
    outside /tmp (a host path under /tmp would land in our own private /tmp)."""
    written = {}
    for path in [*CONFIG["victim_paths"], *CONFIG["host_files"], "/bot/hostile.py"]:
        try:
            with open(path, "r+b") as f:
                f.write(b"pwned\n")
            written[path] = "written"
        except OSError as error:
            written[path] = f"{type(error).__name__}: {error.strerror}"
    for path in ("/bot/new-file", "/usr/bin/hostile", "/etc/ld.so.cache", "/new-file",
                 "/dev/new-file", "/root/new-file", "/proc/1/root/usr/new-file"):
        try:
            with open(path, "ab") as f:
                f.write(b"pwned\n")
            written[path] = "written"
        except OSError as error:
            written[path] = f"{type(error).__name__}: {error.strerror}"
    report("write_files", any(v == "written" for v in written.values()), written)


def visible_processes():
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            cmdline = try_read(f"/proc/{name}/cmdline")[1]
            environ = try_read(f"/proc/{name}/environ")[1]
            found[name] = {"cmdline": str(cmdline).replace("\0", " "),
                           "environ": str(environ).replace("\0", " ")}
    return found


def read_environment():
    # Everything that could hold the host's environment or a token: ours, and every
    # process's we can see. The test looks for its secrets in this report.
    detail = {"environ": dict(os.environ), "processes": visible_processes()}
    own = ("PATH", "HOME", "LANG", "PWD")
    foreign = sorted(k for k in os.environ if k not in own and not k.startswith("TWISTARENA_"))
    report("read_environment", bool(foreign), detail)


def proc_snoop():
    runner = CONFIG["runner_pid"]
    detail = {"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
              "runner_environ": try_read(f"/proc/{runner}/environ"),
              "runner_cmdline": try_read(f"/proc/{runner}/cmdline"),
              "mounts": try_read("/proc/self/mounts")[1]}
    host_like = [p for p, info in visible_processes().items()
                 if not any(w in info["cmdline"] for w in ("bwrap", "python3", "sleep"))]
    report("proc_snoop", bool(host_like), {**detail, "unexpected": host_like})


def network():
    tried = {}
    for port in CONFIG["ports"]:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                tried[f"tcp 127.0.0.1:{port}"] = "connected"
        except OSError as error:
            tried[f"tcp 127.0.0.1:{port}"] = f"{type(error).__name__}: {error.strerror}"
    interfaces = [name for _, name in socket.if_nameindex()]
    routes = try_read("/proc/net/route")[1].splitlines()[1:]
    detail = {"connections": tried, "interfaces": interfaces, "routes": routes}
    succeeded = "connected" in tried.values() or interfaces != ["lo"] or bool(routes)
    report("network", succeeded, detail)


def fork_bomb():
    children = []
    failure = ""
    for _ in range(5000):
        try:
            pid = os.fork()
        except OSError as error:
            failure = f"{errno.errorcode.get(error.errno, error.errno)}: {error.strerror}"
            break
        if pid == 0:
            signal.pause()
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    report("fork_bomb", not failure, {"forked": len(children), "then": failure})


def allocate_4gib():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            block = bytearray(4 * GIB)
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.write(write, b"allocated")
        except MemoryError:
            os.write(write, b"MemoryError")
        os._exit(0)
    os.close(write)
    said = os.read(read, 100).decode()
    _, status = os.waitpid(pid, 0)
    how = f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else said
    report("allocate_4gib", said == "allocated", how)


def fill_tmp():
    cap = CONFIG["tmp_mb"] << 20
    written = {}
    for path in ("/tmp/hostile-fill", os.path.join(os.environ.get("HOME", "/tmp"), "fill"),
                 "/dev/shm/hostile-fill"):
        total, why = 0, "no error"
        try:
            with open(path, "wb") as f:
                while total < cap + (8 << 20):
                    f.write(CHUNK)
                    f.flush()
                    total += len(CHUNK)
        except OSError as error:
            why = f"{errno.errorcode.get(error.errno, error.errno)}"
        written[path] = {"bytes": total, "then": why}
        os.remove(path)
    report("fill_tmp", any(w["bytes"] > cap for w in written.values()), written)


def leave_daemon():
    marker = CONFIG["daemon_marker"]
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            for fd in (0, 1, 2):
                os.close(fd)
            os.execv("/usr/bin/sleep", ["sleep", marker])
        os._exit(0)
    os.waitpid(pid, 0)
    report("leave_daemon", True, f"left 'sleep {marker}' behind (double fork, setsid)")


def raise_limits():
    tried = {}
    for name in ("RLIMIT_NOFILE", "RLIMIT_CPU", "RLIMIT_NPROC", "RLIMIT_AS"):
        kind = getattr(resource, name)
        _, hard = resource.getrlimit(kind)
        if hard == resource.RLIM_INFINITY:
            tried[name] = "unlimited already"
            continue
        try:
            resource.setrlimit(kind, (hard + 1000, hard + 1000))
            tried[name] = "raised"
        except (ValueError, OSError) as error:
            tried[name] = f"{type(error).__name__}: {error}"
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("-1000")
        tried["oom_score_adj"] = "lowered"
    except OSError as error:
        tried["oom_score_adj"] = f"{type(error).__name__}: {error.strerror}"
    try:
        os.setuid(0)
        tried["setuid 0"] = "became root"
    except OSError as error:
        tried["setuid 0"] = f"{type(error).__name__}: {error.strerror}"
    libc = ctypes.CDLL(None, use_errno=True)
    clone_newuser = 0x10000000
    if libc.unshare(clone_newuser) == 0:
        tried["new user namespace"] = "made one"
    else:
        tried["new user namespace"] = errno.errorcode.get(ctypes.get_errno(), "?")
    bad = ("raised", "lowered", "became root", "made one")
    report("raise_limits", any(v in bad for v in tried.values()), tried)


def ptrace():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    tried = {}
    child = os.fork()
    if child == 0:
        signal.pause()
        os._exit(0)
    for name, request, pid in (("attach to pid 1", 16, 1), ("attach to own child", 16, child),
                               ("seize own child", 0x4206, child), ("traceme", 0, 0)):
        result = libc.ptrace(request, pid, None, None)
        tried[name] = "attached" if result == 0 else errno.errorcode.get(ctypes.get_errno(), "?")
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    report("ptrace", "attached" in tried.values(), tried)


KERNEL_SETTINGS = ("kernel/core_uses_pid", "kernel/core_pattern", "vm/overcommit_memory",
                   "kernel/randomize_va_space", "vm/panic_on_oom")


def kernel_settings():
    """Write kernel settings through /proc/sys: each one's own value back, so that even
    a write that is accepted changes nothing on the host; and count what looks
    writable there (and what uid the program is, as its namespace shows it)."""
    tried = {}
    for name in KERNEL_SETTINGS:
        path = "/proc/sys/" + name
        try:
            with open(path, "rb") as f:
                value = f.read()
            with open(path, "wb") as f:
                f.write(value)
            tried[name] = "written"
        except OSError as error:
            tried[name] = f"{errno.errorcode.get(error.errno, error.errno)}"
    writable = []
    for folder, _, files in os.walk("/proc/sys"):
        writable += [os.path.join(folder, n) for n in files
                     if os.access(os.path.join(folder, n), os.W_OK)]
    for name in ("sysrq-trigger", "irq", "bus", "fs"):
        if os.path.exists("/proc/" + name) and os.access("/proc/" + name, os.W_OK):
            writable.append("/proc/" + name)
    detail = {"writes": tried, "writable": writable[:20], "writable_count": len(writable),
              "uid_map": try_read("/proc/self/uid_map")[1]}
    report("kernel_settings", "written" in tried.values() or bool(writable), detail)


def other_sockets():
    """Socket families that reach past the sandbox's network namespace (vsock talks to
    the hypervisor) or into the kernel (packet, crypto API)."""
    tried = {}
    for name, family, kind in (("AF_VSOCK", 40, socket.SOCK_STREAM),
                               ("AF_PACKET", 17, socket.SOCK_RAW),
                               ("AF_ALG", 38, socket.SOCK_SEQPACKET)):
        try:
            socket.socket(family, kind).close()
            tried[name] = "opened"
        except OSError as error:
            tried[name] = errno.errorcode.get(error.errno, str(error.errno))
    report("other_sockets", "opened" in tried.values(), tried)


#: machine -> call -> (number, arguments the kernel itself would answer differently).
SYSCALLS = {
    "x86_64": {"keyctl": (250, (0, -3, 0)), "bpf": (321, (9999, 0, 0)),
               "perf_event_open": (298, (0, 0, -1, -1, 0)), "userfaultfd": (323, (0,)),
               "io_uring_setup": (425, (1, 0)), "kcmp": (312, (0, 0, 0, 0, 0)),
               "unshare": (272, (0,)), "syslog": (103, (10, 0, 0))},
    "aarch64": {"keyctl": (219, (0, -3, 0)), "bpf": (280, (9999, 0, 0)),
                "perf_event_open": (241, (0, 0, -1, -1, 0)), "userfaultfd": (282, (0,)),
                "io_uring_setup": (425, (1, 0)), "kcmp": (272, (0, 0, 0, 0, 0)),
                "unshare": (97, (0,)), "syslog": (116, (10, 0, 0))},
}


def forbidden_syscalls():
    """Calls the filter refuses: by name (keyrings, bpf, perf, userfaultfd, io_uring)
    and by not being allowed (kcmp, unshare, syslog: each succeeds unfiltered with
    these arguments)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    tried = {}
    for name, (number, args) in SYSCALLS[platform.machine()].items():
        if name == "kcmp":
            args = (os.getpid(), os.getpid(), *args[2:])
        result = libc.syscall(number, *(ctypes.c_long(a) for a in args))
        tried[name] = ("succeeded" if result >= 0
                       else errno.errorcode.get(ctypes.get_errno(), "?"))
    report("forbidden_syscalls", "succeeded" in tried.values(), tried)


def mountinfo():
    """What the mount table tells of the host: the paths the program's folder came from."""
    detail = {"mountinfo": try_read("/proc/self/mountinfo")[1],
              "mounts": try_read("/proc/self/mounts")[1]}
    # The host's own folders (not the top ones: /proc/sys shows as "/sys" of proc).
    folders = [p for p in CONFIG["host_paths"] if p.count("/") >= 2]
    leaked = [p for p in folders if any(p in text for text in detail.values())]
    report("mountinfo", bool(leaked), {**detail, "leaked": leaked})


ATTEMPTS = (read_other_entrant, read_host_paths, write_files, read_environment, proc_snoop,
            network, fork_bomb, allocate_4gib, fill_tmp, leave_daemon, raise_limits, ptrace,
            kernel_settings, other_sockets, forbidden_syscalls, mountinfo)


def fork_until_refused():
    """Children that wait forever, as many as the sandbox lets it make."""
    while True:
        try:
            if os.fork() == 0:
                signal.pause()
                os._exit(0)
        except OSError:
            return


def spin(processes):
    """Processes that compute forever."""
    for _ in range(processes):
        if os.fork() == 0:
            while True:
                pass


def main():
    print("HOSTILE started", file=sys.stderr, flush=True)
    if MODE == "quiet":
        for attempt in ATTEMPTS:
            started = time.monotonic()
            try:
                attempt()
            except Exception as error:  # an attempt that blew up is reported, not fatal
                report(attempt.__name__, False, f"raised {error!r}")
            print(f"{attempt.__name__} took {time.monotonic() - started:.2f}s",
                  file=sys.stderr, flush=True)
    elif MODE == "stderr":
        for _ in range(GIB // len(CHUNK)):
            sys.stderr.buffer.write(CHUNK)
        sys.stderr.buffer.flush()
        print("HOSTILE done flooding stderr", file=sys.stderr, flush=True)
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "over":
            break
        if MODE == "forkbomb":
            fork_until_refused()
        if MODE in ("forkbomb", "silent"):
            continue
        if MODE == "burn" and not CONFIG.get("spinning"):
            CONFIG["spinning"] = True
            spin(6)
        if MODE == "stdout":
            for _ in range(GIB // len(CHUNK)):
                sys.stdout.buffer.write(CHUNK)
            sys.stdout.buffer.flush()
        print(message["legal_actions"][0]["id"], flush=True)


main()
