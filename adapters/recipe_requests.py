"""Adapter for ``recipe-requests``: the requests + ``iter_lines`` loop provider docs hand out.

The parser under test is ``stream_chat`` below, written fresh after the loop
that provider guides give for reading a stream without an SDK (the gateway
guide among this project's seed documents shows one): POST with
``stream=True``, ``iter_lines(decode_unicode=True)``, keep lines that start
with ``"data: "``, stop at ``[DONE]``, ``json.loads`` the rest, keep the
last truthy ``usage``, add ``choices[0].delta.content``. It is reproduced
faithfully, blind spots included. It reports the text and the usage and
nothing else, and raises whatever ``requests`` or ``json`` raise.

The adapter mounts a ``requests`` transport adapter that answers with the
case's status, headers and reads, and only translates the recipe's result.
"""

from __future__ import annotations

import importlib.metadata
import json
from collections.abc import Iterator
from typing import Any

try:
    import requests
    from requests.adapters import BaseAdapter
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"the recipe-requests adapter needs requests ({exc}); "
        "install it with: pip install 'streamproof[recipes]' "
        "(from a clone: pip install -e '.[recipes]')"
    ) from None

NAME = "recipe-requests"
VERSION = f"requests {importlib.metadata.version('requests')}"
CAPABILITIES = {"content", "usage"}
URL = "http://streamproof.invalid/v1/chat/completions"


def stream_chat(session: Any, model: str, messages: list[Any]) -> tuple[str, Any]:
    """The recipe: the parser under test."""
    resp = session.post(
        URL,
        headers={"Content-Type": "application/json"},
        json={"model": model, "messages": messages, "stream": True},
        stream=True,
        timeout=300,
    )
    text, usage = "", None
    for line in resp.iter_lines(decode_unicode=True):
        if not line or not line.startswith("data: "):
            continue
        data = line[6:]
        if data == "[DONE]":
            break
        chunk = json.loads(data)
        if chunk.get("usage"):
            usage = chunk["usage"]
        choices = chunk.get("choices")
        if not choices:
            continue
        piece = choices[0].get("delta", {}).get("content")
        if piece:
            text += piece
    return text, usage


class _RawBody:
    """The file-like ``raw`` that requests reads a streamed body from."""

    def __init__(self, reads: Iterator[bytes]) -> None:
        self._reads = reads

    def stream(self, amt: int = 0, decode_content: bool = True) -> Iterator[bytes]:
        yield from self._reads

    def close(self) -> None:
        pass


class _Replay(BaseAdapter):  # type: ignore[misc]
    def __init__(self, response: Any) -> None:
        super().__init__()
        self._response = response

    def send(self, request: Any, **kwargs: Any) -> requests.Response:
        reply = requests.Response()
        reply.status_code = self._response.status
        reply.headers.update(self._response.headers)
        reply.raw = _RawBody(self._response.iter_bytes())
        # As requests' own HTTPAdapter.build_response does (text/* without a
        # charset becomes ISO-8859-1; other types without one, None).
        reply.encoding = requests.utils.get_encoding_from_headers(reply.headers)
        reply.request, reply.url = request, request.url
        return reply

    def close(self) -> None:
        pass


def parse(response: Any) -> dict[str, Any]:
    session = requests.Session()
    session.mount("http://streamproof.invalid", _Replay(response))
    request = response.request
    text, usage = stream_chat(session, request.get("model", ""), request.get("messages", []))
    return {"status": "complete", "choices": [{"index": 0, "content": text}], "usage": usage}
