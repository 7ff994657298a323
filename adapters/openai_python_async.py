"""Adapter for the official OpenAI Python SDK driven through ``AsyncOpenAI``.

Everything but the client is shared with ``openai_python.py`` beside it,
loaded by path as the harness loads every adapter.
"""

from __future__ import annotations

from streamproof.adapter import load_sibling

_shared = load_sibling(__file__, "openai_python.py")

NAME = "openai-python-async"
VERSION = _shared.VERSION
CAPABILITIES = _shared.CAPABILITIES
parse = _shared.parse_async
call = _shared.call_async
