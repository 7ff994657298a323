"""Adapter for ``httpx-sse``: ``connect_sse`` + ``iter_sse()`` + ``json.loads`` per event.

The body reaches httpx through a transport, so httpx-sse's own decoder reads
the case's reads. Errors translated, as httpx-sse documents them:
``httpx_sse.SSEError`` (the response is not ``text/event-stream``), with the
status the response it exposes carries. Everything else is a crash.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

try:
    import httpx
    from httpx_sse import SSEError, connect_sse
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"the httpx-sse adapter needs httpx-sse ({exc}); "
        "install it with: pip install 'streamproof[httpx-sse]' "
        "(from a clone: pip install -e '.[httpx-sse]')"
    ) from None

from streamproof.adapter import load_sibling

_reader = load_sibling(__file__, "_chunk_reader.py")
_http = load_sibling(__file__, "_httpx_replay.py")

NAME = "httpx-sse"
VERSION = importlib.metadata.version("httpx-sse")
CAPABILITIES = {*_reader.CAPABILITIES, "http_error"}


def parse(response: Any) -> dict[str, Any]:
    reader = _reader.ChunkReader(response)
    with (
        httpx.Client(transport=_http.ReplayTransport(response)) as client,
        connect_sse(
            client, "POST", "http://streamproof.invalid/v1/chat/completions", json=response.request
        ) as source,
    ):
        try:
            for sse in source.iter_sse():
                if not reader.data(sse.data):
                    break
        except SSEError as exc:
            # The response httpx-sse exposes: its text, and its JSON the way an
            # application reads an error body (``response.json()``), when it is JSON.
            response_ = source.response
            text = response_.read().decode("utf-8", errors="replace")
            try:
                body = response_.json()
            except ValueError:
                body = None
            error = body.get("error") if isinstance(body, dict) else None
            error = error if isinstance(error, dict) else {}
            outcome = reader.outcome("error")
            outcome["error"] = {
                "message": f"{exc}: {text}",
                "type": error.get("type"),
                "code": error.get("code"),
                "http_status": response_.status_code,
            }
            return outcome
    return reader.outcome()
