"""A bridged bot that plays the first legal action. ``probe_bot.py REPORT PORT`` first
writes what it can see of its sandbox to REPORT: its resource limits, whether it
leads its own process group, and whether it can connect to 127.0.0.1:PORT."""

import json
import os
import resource
import socket
import sys

if len(sys.argv) > 2:
    try:
        with socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2):
            network = "connected"
    except OSError as error:
        network = f"refused: {error}"
    with open(sys.argv[1], "a", encoding="utf-8") as report:
        report.write(json.dumps({
            "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
            "memory": resource.getrlimit(resource.RLIMIT_AS)[0],
            "files": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
            "own_group": os.getpgrp() == os.getpid(),
            "network": network}) + "\n")
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "over":
        break
    print(message["legal_actions"][0]["id"], flush=True)
