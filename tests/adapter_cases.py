"""Small hand-written bodies and helpers for the Python adapters' tests."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import pytest

from streamproof.harness.loader import (
    Adapter,
    ReplayResponse,
    load_adapter,
)

# litellm fetches its model cost map over the network at import unless told not to. The
# adapter sets these before importing it; importorskip below may import it first.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")

# adapter name -> (the extra that installs its library, the modules it imports)
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "openai-python": ("openai", ("httpx", "openai")),
    "openai-python-async": ("openai", ("httpx", "openai")),
    "openai-python-helper": ("openai", ("httpx", "openai")),
    "httpx-sse": ("httpx-sse", ("httpx", "httpx_sse")),
    "sseclient-py": ("sseclient-py", ("sseclient",)),
    "litellm": ("litellm", ("httpx", "openai", "litellm")),
    "langchain-openai": ("langchain", ("httpx", "openai", "langchain_openai")),
    "recipe-requests": ("recipes", ("requests",)),
}
OPENAI = ["openai-python", "openai-python-async"]
SSE_ONLY = ["httpx-sse", "sseclient-py"]  # an SSE library under _chunk_reader.py
HELPERS = ["openai-python-helper"]  # an SDK's own streaming helper, beside its raw stream
ALL = [*OPENAI, *HELPERS, *SSE_ONLY, "litellm", "langchain-openai", "recipe-requests"]

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"

_loaded: dict[str, Adapter] = {}


def adapter(name: str) -> Adapter:
    """The built-in adapter ``name``, or a skip naming the extra its library comes with."""
    if name != "reference":
        extra, modules = EXTRAS[name]
        for module in modules:
            pytest.importorskip(
                module,
                reason=f"the {name} adapter needs {extra}: pip install 'streamproof[{extra}]'",
            )
    if name not in _loaded:
        _loaded[name] = load_adapter(name)
    return _loaded[name]


def run(name: str, response: ReplayResponse) -> Any:
    """``parse`` as the worker calls it, where a warning is not an exception.

    This suite turns warnings into errors, and litellm turns any exception raised inside its
    stream (one from a pydantic deprecation warning included) into an APIError.
    """
    loaded = adapter(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return loaded.run(response)


# --- the bodies ------------------------------------------------------------------------

SSE = {"content-type": "text/event-stream"}
JSON = {"content-type": "application/json"}
STREAM = {
    "model": "m-1",
    "messages": [{"role": "user", "content": "hi"}],
    "stream": True,
    "stream_options": {"include_usage": True},
}
USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


def event(*choices: dict[str, Any], **fields: Any) -> bytes:
    """One ``data:`` event carrying a chunk with ``choices``."""
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m-1"}
    chunk.update(fields, choices=list(choices))
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def delta(finish_reason: str | None = None, index: int = 0, **fields: Any) -> dict[str, Any]:
    return {"index": index, "delta": fields, "finish_reason": finish_reason}


def respond(
    body: bytes,
    ends: list[int] | None = None,
    *,
    status: int = 200,
    headers: dict[str, str] = SSE,
    request: dict[str, Any] = STREAM,
) -> ReplayResponse:
    return ReplayResponse(
        status=status,
        headers=headers,
        request=request,
        case_id="test/python-adapters",
        transport="test",
        body=body,
        ends=ends or [len(body)],
    )


DONE = b"data: [DONE]\n\n"
HEL = event(delta(role="assistant", content="Hel"))
LO = event(delta("stop", content="lo"))
PLAIN = HEL + LO + event(usage=USAGE) + DONE
SPLIT = len(HEL) + 20  # the first read ends inside the second event
ERROR_EVENT = b'data: {"error":{"message":"overloaded","type":"server_error","code":"busy"}}\n\n'
IN_STREAM_ERROR = HEL + ERROR_EVENT + DONE
CORRUPT = HEL + b"data: {oops\n\n" + LO + DONE
CUT = HEL  # no finish reason, no [DONE]: the connection just ended
RATE_LIMITED = b'{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit"}}'
BAD_GATEWAY = b"<html><body>502 Bad Gateway</body></html>"
COMPLETION = json.dumps(
    {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "created": 1,
        "model": "m-2",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hi there"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6},
    }
).encode()
NOT_STREAMED = {"model": "m-2", "messages": [{"role": "user", "content": "hi"}]}
TOOL_CALL = {"index": 0, "id": "call_1", "type": "function"}
TOOLS_AND_REASONING = (
    event(delta(role="assistant", reasoning_content="Think"))
    + event(delta(reasoning_content="ing."))
    + event(delta(tool_calls=[{**TOOL_CALL, "function": {"name": "weather", "arguments": ""}}]))
    + event(delta(tool_calls=[{"index": 0, "function": {"arguments": '{"city":'}}]))
    + event(delta(tool_calls=[{"index": 0, "function": {"arguments": '"Paris"}'}}]))
    + event(delta("tool_calls"))
    + DONE
)
WEATHER = {**TOOL_CALL, "function": {"name": "weather", "arguments": '{"city":"Paris"}'}}
REFUSAL = (
    event(delta(role="assistant", content=None, refusal="I can"))
    + event(delta("stop", refusal="not."))
    + DONE
)
TWO_CHOICES = (  # n=2, interleaved, choice 0 first
    event(delta(index=0, role="assistant", content="A"))
    + event(delta(index=1, role="assistant", content="B"))
    + event(delta("length", index=1, content="b"))
    + event(delta("stop", index=0, content="a"))
    + DONE
)
CAFE = event(delta("stop", role="assistant", content="café")).replace(b"\\u00e9", "é".encode())


def deltas(*pieces: tuple[int, str, int]) -> list[dict[str, Any]]:
    return [{"choice": c, "content": text, "at_byte": at} for c, text, at in pieces]


def usage_is_estimated(usage: Any) -> bool:
    """litellm's token counts where no usage was sent (its tokenizer's, not the server's)."""
    counts = [usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")]
    return all(isinstance(n, int) and n >= 0 for n in counts) and counts[2] > 0


# What each adapter reports for the plain stream's choice.
PLAIN_CHOICE = {
    "openai-python": {
        "index": 0,
        "role": "assistant",
        "content": "Hello",
        "refusal": None,
        "reasoning": None,
        "finish_reason": "stop",
        "tool_calls": [],
    },
    "httpx-sse": {"index": 0, "role": "assistant", "content": "Hello", "finish_reason": "stop"},
    "litellm": {
        "index": 0,
        "role": "assistant",
        "content": "Hello",
        "reasoning": None,
        "refusal": None,
        "finish_reason": "stop",
        "tool_calls": [],
    },
    "langchain-openai": {
        "index": 0,
        "content": "Hello",
        "refusal": None,
        "finish_reason": "stop",
        "tool_calls": [],
    },
    "reference": {
        "index": 0,
        "role": "assistant",
        "content": "Hello",
        "reasoning": "",
        "refusal": "",
        "finish_reason": "stop",
        "tool_calls": [],
    },
}
PLAIN_CHOICE["openai-python-async"] = PLAIN_CHOICE["openai-python"]
PLAIN_CHOICE["openai-python-helper"] = PLAIN_CHOICE["openai-python"]
PLAIN_CHOICE["sseclient-py"] = PLAIN_CHOICE["httpx-sse"]
