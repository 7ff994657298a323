"""A subprocess adapter (cmd:) whose replies carry NaN, which is not JSON."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["cmd"] == "start":
        print(
            json.dumps(
                {"name": "nan", "version": "1", "capabilities": ["content", "finish_reason"]}
            ),
            flush=True,
        )
    elif message["cmd"] == "run":
        outcome = {"status": "complete", "choices": [], "usage": {"total_tokens": float("nan")}}
        print(json.dumps({"seq": message["seq"], "outcome": outcome}), flush=True)
    else:
        break
