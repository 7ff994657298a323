"""streamproof: a conformance suite for OpenAI-compatible chat response parsers.

The names below are importable from ``streamproof`` itself; each loads its
module on first use, so ``import streamproof`` (and every adapter worker)
stays cheap. ``docs/architecture.md`` maps the package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .__about__ import __version__

if TYPE_CHECKING:
    from .corpus.cases import Case, Corpus, load_corpus
    from .errors import AdapterError, CorpusError
    from .harness.comparison import Divergence, compare
    from .harness.engine import Engine, Result, Verdict
    from .harness.loader import Adapter, ReplayResponse, load_adapter
    from .harness.replay import replay
    from .reference.chat import ContentPiece, StreamAccumulator
    from .reference.reader import ResponseReader, read_response
    from .reference.sse import Event, SSEDecoder, SSEProtocolError

__all__ = [
    "Adapter",
    "AdapterError",
    "Case",
    "ContentPiece",
    "Corpus",
    "CorpusError",
    "Divergence",
    "Engine",
    "Event",
    "ReplayResponse",
    "ResponseReader",
    "Result",
    "SSEDecoder",
    "SSEProtocolError",
    "StreamAccumulator",
    "Verdict",
    "__version__",
    "compare",
    "load_adapter",
    "load_corpus",
    "read_response",
    "replay",
]

# name -> the module that defines it
_LAZY = {
    "Adapter": "harness.loader",
    "AdapterError": "errors",
    "Case": "corpus.cases",
    "ContentPiece": "reference.chat",
    "Corpus": "corpus.cases",
    "CorpusError": "errors",
    "Divergence": "harness.comparison",
    "Engine": "harness.engine",
    "Event": "reference.sse",
    "ReplayResponse": "harness.loader",
    "ResponseReader": "reference.reader",
    "Result": "harness.engine",
    "SSEDecoder": "reference.sse",
    "SSEProtocolError": "reference.sse",
    "StreamAccumulator": "reference.chat",
    "Verdict": "harness.engine",
    "compare": "harness.comparison",
    "load_adapter": "harness.loader",
    "load_corpus": "corpus.cases",
    "read_response": "reference.reader",
    "replay": "harness.replay",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'streamproof' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
