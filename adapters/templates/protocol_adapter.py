"""A template adapter speaking the streamproof protocol by hand (copy and edit).

Run it with: streamproof run --adapter "cmd:python3 protocol_adapter.py"
Check it with: streamproof check-adapter "cmd:python3 protocol_adapter.py"

The protocol is in streamproof's docs/protocol.md. Replace ``StandInParser``
below with the parser under test, and ``CAPABILITIES`` with what it really
exposes; keep the loop. stdout carries protocol lines only: print anything
else to stderr.
"""

import base64
import json
import sys

CAPABILITIES = ["content", "finish_reason"]


class StandInParser:
    """The parser under test: here, a small stand-in for streamed bodies.

    It reads ``data:`` lines as reads arrive and raises on a chunk that is
    not JSON, as a strict parser would: that is a crash reply, not a failure
    of the protocol.
    """

    def __init__(self):
        self.rest = b""
        self.text = ""
        self.finish_reason = None

    def feed(self, read):
        lines = (self.rest + read).split(b"\n")
        self.rest = lines.pop()
        for line in lines:
            line = line.rstrip(b"\r")
            if not line.startswith(b"data:") or line[5:].strip() == b"[DONE]":
                continue
            for choice in json.loads(line[5:]).get("choices") or []:
                self.text += (choice.get("delta") or {}).get("content") or ""
                self.finish_reason = choice.get("finish_reason") or self.finish_reason


def run(message):
    body = base64.b64decode(message["body"])
    parser = StandInParser()
    start = 0
    for end in message["boundaries"]:  # each offset is where a read ENDS
        parser.feed(body[start:end])  # one read at a time, never joined
        start = end
    choice = {"index": 0, "content": parser.text, "finish_reason": parser.finish_reason}
    return {"status": "complete", "choices": [choice]}


def main():
    for line in sys.stdin:
        message = json.loads(line)
        if message["cmd"] == "start":
            reply = {
                "name": "my-parser",
                "version": "0.0.1",
                "capabilities": CAPABILITIES,
                "protocol": 1,
            }
        elif message["cmd"] == "run":
            try:
                reply = {"seq": message["seq"], "outcome": run(message)}
            except Exception as exc:  # the parser's fault: a crash verdict
                reply = {"seq": message["seq"], "crash": f"{type(exc).__name__}: {exc}"}
        elif message["cmd"] == "stop":
            return
        else:
            reply = {"seq": message.get("seq"), "crash": f"unknown command {message['cmd']!r}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()  # a reply waiting in a buffer is a timeout


if __name__ == "__main__":
    main()
