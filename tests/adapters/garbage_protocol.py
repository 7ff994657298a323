"""A subprocess adapter (cmd:) that answers the handshake, then writes garbage."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["cmd"] == "start":
        print(
            json.dumps(
                {"name": "garbage", "version": "1", "capabilities": ["content", "finish_reason"]}
            ),
            flush=True,
        )
    elif message["cmd"] == "run":
        print("this is not JSON", flush=True)
    else:
        break
