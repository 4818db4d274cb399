"""A bridged bot that plays the first legal action. ``probe_bot.py CPU FILES PORT`` first
checks that it runs in the sandbox it was promised: those CPU seconds and open files
as rlimits, /bot as its working directory, its own process group, and no connection
to 127.0.0.1:PORT. If anything differs it says what on stderr and answers every
decision with garbage, so the match shows it as illegal outputs."""

import json
import os
import resource
import socket
import sys

problems = []
if len(sys.argv) > 3:
    cpu, files, port = (int(a) for a in sys.argv[1:4])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            problems.append("connected to the server's port")
    except OSError:
        pass
    if resource.getrlimit(resource.RLIMIT_CPU) != (cpu, cpu):
        problems.append(f"cpu limit {resource.getrlimit(resource.RLIMIT_CPU)}")
    if resource.getrlimit(resource.RLIMIT_NOFILE) != (files, files):
        problems.append(f"open files limit {resource.getrlimit(resource.RLIMIT_NOFILE)}")
    if os.getcwd() != "/bot" or os.getuid() != 65534:
        problems.append(f"cwd {os.getcwd()}, uid {os.getuid()}")
    if set(os.environ) - {"PATH", "HOME", "LANG", "PWD"}:
        problems.append(f"environment {sorted(os.environ)}")
print(json.dumps({"problems": problems}), file=sys.stderr, flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "over":
        break
    print("garbage" if problems else message["legal_actions"][0]["id"], flush=True)
