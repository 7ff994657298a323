"""Adapter for the official OpenAI Python SDK driven through ``AsyncOpenAI``.

Everything but the client is shared with ``openai_python.py`` beside it,
loaded by path as the harness loads every adapter.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "streamproof_adapter_openai_python_shared", Path(__file__).with_name("openai_python.py")
)
assert _spec is not None and _spec.loader is not None
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)

NAME = "openai-python-async"
VERSION = _shared.VERSION
CAPABILITIES = _shared.CAPABILITIES
parse = _shared.parse_async
call = _shared.call_async
