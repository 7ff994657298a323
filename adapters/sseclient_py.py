"""Adapter for ``sseclient-py``: ``SSEClient(stream).events()`` + ``json.loads`` per event.

sseclient-py reads any iterable of bytes, as its documentation shows with a
``requests`` response; here it reads the case's reads directly. It documents
no error classes of its own and does not look at the HTTP status, so neither
``http_error`` nor ``stream_error`` is claimed; a failure escapes as a crash.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

try:
    import sseclient
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"the sseclient-py adapter needs sseclient-py ({exc}); "
        "install it with: pip install 'streamproof[sseclient-py]' "
        "(from a clone: pip install -e '.[sseclient-py]')"
    ) from None

from streamproof.adapter import load_sibling

_reader = load_sibling(__file__, "_chunk_reader.py")

NAME = "sseclient-py"
VERSION = importlib.metadata.version("sseclient-py")
CAPABILITIES = set(_reader.CAPABILITIES)


def parse(response: Any) -> dict[str, Any]:
    reader = _reader.ChunkReader(response)
    for event in sseclient.SSEClient(response.iter_bytes()).events():
        if not reader.data(event.data):
            break
    return reader.outcome()
