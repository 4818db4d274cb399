"""A bridged bot in the plain-text form that answers its first decision with an id
that is not legal, then the first legal action of every decision.

``python refused_bot.py TRANSCRIPT``: every line it reads is appended to TRANSCRIPT,
so a test can see the decision sent again with its ``rejected`` line.
"""

import sys

with open(sys.argv[1], "a", encoding="utf-8") as transcript:
    ids: list[int] = []
    refused_once = False
    for line in sys.stdin:
        transcript.write(line)
        transcript.flush()
        words = line.split(" ")
        if words[0] == "decision":
            ids = []
        elif words[0] == "action":
            ids.append(int(words[1]))
        elif words[0].strip() == "end":
            print(ids[0] if refused_once else max(ids) + 1000, flush=True)
            refused_once = True
        elif words[0] == "over":
            break
