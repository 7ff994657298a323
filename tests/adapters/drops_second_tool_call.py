"""A test adapter that keeps only the first tool call of each delta.

Parsers written against servers that send one call per delta lose the
second call when a delta carries two (parallel calls in one delta). The
fuzzer must find this and shrink it to a case of a few events.
"""

import json

from streamproof.reference.chat import StreamAccumulator
from streamproof.reference.reader import ResponseReader, body_kind
from streamproof.reference.sse import Event, SSEDecoder

NAME = "drops-second-tool-call"


def _first_call_only(data):
    try:
        chunk = json.loads(data)
    except ValueError:
        return data
    for choice in (chunk.get("choices") or []) if isinstance(chunk, dict) else []:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if isinstance(delta, dict) and isinstance(delta.get("tool_calls"), list):
            delta["tool_calls"] = delta["tool_calls"][:1]
    return json.dumps(chunk)


def parse(response):
    if body_kind(response.status, response.headers, response.request) != "stream":
        reader = ResponseReader(response.status, response.headers, response.request)
        for data in response.iter_bytes():
            reader.feed(data)
        return reader.close()
    decoder, chat = SSEDecoder(), StreamAccumulator()
    for data in response.iter_bytes():
        for event in decoder.feed(data):
            chat.feed(Event(_first_call_only(event.data), event.type))
    for event in decoder.close():
        chat.feed(Event(_first_call_only(event.data), event.type))
    return chat.outcome()
