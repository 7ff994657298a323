"""A cmd: adapter that misbehaves on request, for tests of the harness's side.

    scripted_protocol.py HELLO-JSON MODE [COUNTER-FILE STARTS]

HELLO-JSON is the handshake it answers; MODE says how it answers a run.
With ``restart-fails`` it counts its starts in COUNTER-FILE and refuses
every start after the first STARTS.
"""

import json
import os
import sys
import time
from pathlib import Path

HELLO = json.loads(sys.argv[1])
MODE = sys.argv[2]
OUTCOME = {"status": "complete", "choices": []}
NODE_DEATH = """\
file:///tmp/adapter.mjs:3
    throw new Error("parser exploded");
    ^

Error: parser exploded
    at parse (file:///tmp/adapter.mjs:3:11)
    at main (file:///tmp/adapter.mjs:9:5)

Node.js v20.11.1
"""


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def start():
    if MODE == "silent-start":
        time.sleep(600)
    if MODE == "restart-fails":
        counter = Path(sys.argv[3])
        starts = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(starts))
        if starts > int(sys.argv[4]):
            send({"error": "cannot load the parser"})
            sys.exit(2)
    send(HELLO)


def run(seq):
    if MODE == "wrong-seq":
        send({"seq": seq + 100, "outcome": OUTCOME})
    elif MODE == "no-seq":
        send({"outcome": OUTCOME})
    elif MODE == "huge":
        sys.stdout.write(json.dumps({"seq": seq, "outcome": {**OUTCOME, "id": "x" * (2 << 20)}}))
        sys.stdout.write("\n")
        sys.stdout.flush()
    elif MODE == "node-death":
        sys.stderr.write(NODE_DEATH)
        sys.stderr.flush()
        os._exit(1)
    elif MODE == "restart-fails":
        os._exit(3)
    else:
        send({"seq": seq, "outcome": OUTCOME})


for line in sys.stdin:
    message = json.loads(line)
    if message["cmd"] == "start":
        start()
    elif message["cmd"] == "run":
        run(message["seq"])
    else:
        break
