"""The built-in adapter for streamproof's own reference parser.

It drives ``streamproof.reference.ResponseReader`` the way an application
would: one read at a time, recording each piece of content as it surfaces.
"""

from __future__ import annotations

from typing import Any

from streamproof import __version__
from streamproof.reference import ResponseReader

NAME = "reference"
VERSION = __version__
CAPABILITIES = {
    "content",
    "role",
    "finish_reason",
    "usage",
    "tool_calls",
    "reasoning",
    "refusal",
    "multiple_choices",
    "stream_error",
    "http_error",
    "truncation",
    "non_streaming",
    "metadata",
    "incremental",
    "function_call",
    "custom_tool_calls",
    "logprobs",
    "audio",
    "annotations",
}


def parse(response: Any) -> dict[str, Any]:
    reader = ResponseReader(response.status, response.headers, response.request)
    deltas = []
    for data in response.iter_bytes():
        for choice, text in reader.feed(data):
            deltas.append({"choice": choice, "content": text, "at_byte": response.bytes_delivered})
    outcome = reader.close()
    outcome["deltas"] = deltas
    return outcome
