"""A bridged bot that misbehaves once in each way, then plays the first legal action.

``python misbehaving_bot.py STATE_FILE``: the file counts decisions across
restarts; decision 2 crashes the program, decision 4 answers garbage,
decision 6 hangs, decision 8 writes an id that is not legal (the server refuses it,
and decision 9 is the same one sent again: it writes its ``rejected`` to stderr),
decision 10 answers garbage again (a fourth failure: the bridge gives up on it).
"""

import json
import sys
import time
from pathlib import Path

state = Path(sys.argv[1])
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] != "decision":
        break
    count = int(state.read_text() or "0") + 1 if state.exists() else 1
    state.write_text(str(count))
    print(f"decision {count}", file=sys.stderr, flush=True)
    if "rejected" in message:
        print(f"rejected {message['rejected']}", file=sys.stderr, flush=True)
    if count == 2:
        sys.exit(3)
    if count in (4, 10):
        print("my move is the best move", flush=True)
        continue
    if count == 6:
        time.sleep(60)
    if count == 8:
        print(max(a["id"] for a in message["legal_actions"]) + 1000, flush=True)
        continue
    print(message["legal_actions"][0]["id"], flush=True)
