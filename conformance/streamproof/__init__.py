"""streamproof: a conformance suite for OpenAI-compatible chat response parsers."""

from .__about__ import __version__
from .adapter import Adapter, AdapterError, ReplayResponse, load_adapter
from .chat import ContentPiece, StreamAccumulator
from .comparison import Divergence, compare
from .corpus import Case, Corpus, CorpusError, load_corpus
from .reference import ResponseReader, read_response
from .runner import Engine, Result, Verdict
from .sse import Event, SSEDecoder, SSEProtocolError

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
]
