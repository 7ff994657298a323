"""A template adapter speaking the streamproof protocol by hand (copy and edit).

Run it with: streamproof run --adapter "cmd:python protocol_adapter.py"

Replace ``my_parser`` below with the parser under test; keep the loop.
"""

import base64
import json
import sys


def my_parser(reads):
    """The parser under test: here, a stand-in that only joins the text."""
    text = ""
    for read in reads:  # feed the parser one read at a time
        text += read.decode("utf-8", errors="replace")
    return {"status": "complete", "choices": [{"index": 0, "content": ""}]}


def run(message):
    body = base64.b64decode(message["body"])
    reads, start = [], 0
    for end in message["boundaries"]:
        reads.append(body[start:end])
        start = end
    return my_parser(reads)


def main():
    for line in sys.stdin:
        message = json.loads(line)
        if message["cmd"] == "start":
            reply = {"name": "my-parser", "version": "0.0.1", "capabilities": ["content"]}
        elif message["cmd"] == "run":
            try:
                reply = {"seq": message["seq"], "outcome": run(message)}
            except Exception as exc:  # the parser's fault: a crash verdict
                reply = {"seq": message["seq"], "crash": f"{type(exc).__name__}: {exc}"}
        else:
            return
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
