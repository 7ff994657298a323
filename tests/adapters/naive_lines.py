"""A test adapter around a naive parser: split on LF, `data: ` prefix only.

It is the loop many tutorials show. It misses CR line ends, `data:` without a
space, multi-line data, treats every stream as complete and stops at the
first corrupt event with an exception.
"""

import json

NAME = "naive-lines"


def parse(response):
    body = b"".join(response.iter_bytes()).decode("utf-8")
    text = ""
    finish = None
    for line in body.split("\n"):
        if not line.startswith("data: "):
            continue
        data = line[6:].strip()
        if data == "[DONE]":
            break
        chunk = json.loads(data)
        for choice in chunk.get("choices") or []:
            text += (choice.get("delta") or {}).get("content") or ""
            finish = choice.get("finish_reason") or finish
    return {
        "status": "complete",
        "choices": [{"index": 0, "content": text, "finish_reason": finish}],
    }
