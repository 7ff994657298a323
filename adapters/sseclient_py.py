"""Adapter for ``sseclient-py``: ``SSEClient(stream).events()`` + ``json.loads`` per event.

sseclient-py reads any iterable of bytes, as its documentation shows with a
``requests`` response; here it reads the case's reads directly. It documents
no error classes of its own and does not look at the HTTP status, so neither
``http_error`` nor ``stream_error`` is claimed; a failure escapes as a crash.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path
from typing import Any

try:
    import sseclient
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"the sseclient-py adapter needs sseclient-py ({exc}); "
        "install it with: pip install 'streamproof[sseclient-py]'"
    ) from None

_spec = importlib.util.spec_from_file_location(
    "streamproof_adapter_chunk_reader", Path(__file__).with_name("_chunk_reader.py")
)
assert _spec is not None and _spec.loader is not None
_reader = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reader)

NAME = "sseclient-py"
VERSION = importlib.metadata.version("sseclient-py")
CAPABILITIES = set(_reader.CAPABILITIES)


def parse(response: Any) -> dict[str, Any]:
    reader = _reader.ChunkReader(response)
    for event in sseclient.SSEClient(response.iter_bytes()).events():
        if not reader.data(event.data):
            break
    return reader.outcome()
