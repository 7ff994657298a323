"""The protocol, spoken well, for the broken adapters beside it to spoil one rule each.

Each adapter calls ``serve(...)`` with what it does differently.
"""

import base64
import json
import sys

HELLO = {"name": "broken", "version": "1", "capabilities": ["content"], "protocol": 1}
OUTCOME = {"status": "complete", "choices": [{"index": 0, "content": ""}]}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def reads_of(message):
    body = base64.b64decode(message["body"])
    reads, start = [], 0
    for end in message["boundaries"]:
        reads.append(body[start:end])
        start = end
    return reads


def parse(reads):
    """A stand-in parser that raises on a data line cut inside its JSON."""
    for line in b"".join(reads).decode("utf-8", errors="replace").splitlines():
        if line.startswith("data: {"):
            json.loads(line[6:])
    return OUTCOME


def answer(message, parser=parse):
    try:
        return {"seq": message["seq"], "outcome": parser(reads_of(message))}
    except Exception as exc:
        return {"seq": message["seq"], "crash": f"{type(exc).__name__}: {exc}"}


def serve(hello=HELLO, run=answer, on_stop=None, after_reply=None, at_eof=None):
    for line in sys.stdin:
        message = json.loads(line)
        if message["cmd"] == "start":
            send(hello)
        elif message["cmd"] == "run":
            reply = run(message)
            send(reply)
            if after_reply is not None:
                after_reply(message, reply)
        elif message["cmd"] == "stop":
            if on_stop is None:
                return
            on_stop()
    if at_eof is not None:
        at_eof()
