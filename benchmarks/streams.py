"""Deterministic OpenAI-style chat completion streams for the benchmarks.

``build_stream`` writes the body a server sends for ``stream=True`` with
``stream_options.include_usage``: one ``chat.completion.chunk`` per content
delta, a finish chunk, a usage chunk with ``"choices":[]`` and ``data: [DONE]``.
The text is drawn from a fixed word list by a ``random.Random`` with a fixed
seed, so the same arguments always give the same bytes. Some words are
non-ASCII (sent as raw UTF-8, as OpenAI does) and some need JSON escapes, so
reads of a few bytes cut multi-byte characters and escapes in two.

The envelope is kept to the keys every provider sends (about 130 bytes an
event), so 20,000 events make the 3 MB stream the benchmark asks for;
``min_bytes`` pads the content up to a size, it never shrinks a stream.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import Any

__all__ = ["FULL", "QUICK", "Stream", "build_stream", "split_reads"]

SEED = 20240611
CHUNK_ID = "chatcmpl-9Qx7bTn2"
CREATED = 1718000000
MODEL = "gpt-4o-mini"

# (events, min_bytes): the stream of a full run and of a smoke check.
FULL = (20_000, 3_000_000)
QUICK = (1_000, 300_000)

_WORDS = (
    " the",
    " stream",
    " parser",
    " reads",
    " each",
    " chunk",
    " of",
    " a",
    " response",
    " and",
    " keeps",
    " every",
    " delta",
    " in",
    " order",
    ",",
    ".",
    " token",
    " data",
    " café",
    " naïve",
    " Straße",
    " façade",
    " résumé",
    " 日本語",
    " テスト",
    " 中文",
    " привет",
    " мир",
    " Ελληνικά",
    " עברית",
    " العربية",
    " 😀",
    " 🚀",
    " —",
    " «ok»",
    ' "quoted"',
    " back\\slash",
    "\n",
    "\n\n",
    "\t",
    " 1/2",
    " €5",
    " ≤",
    " ∑",
)


@dataclass(frozen=True)
class Stream:
    """A stream body and what a correct parser must find in it."""

    body: bytes
    events: int  # SSE events in the body, [DONE] included
    content_events: int  # events whose delta carries non-empty content
    content: str  # every content delta, concatenated
    usage: dict[str, int]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.body).hexdigest()

    @property
    def content_sha256(self) -> str:
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()


def _event(chunk: dict[str, Any]) -> bytes:
    text = json.dumps(chunk, ensure_ascii=False, separators=(",", ":"))
    return b"data: " + text.encode("utf-8") + b"\n\n"


def _chunk(delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
    return {
        "id": CHUNK_ID,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _texts(events: int, rng: random.Random) -> list[str]:
    """One word a delta, like the tokens a model streams."""
    return [rng.choice(_WORDS) for _ in range(events)]


def _pad(texts: list[str], extra_bytes: int, rng: random.Random) -> list[str]:
    """Lengthen the deltas by about ``extra_bytes`` of UTF-8, spread evenly."""
    per_event = extra_bytes // len(texts)
    padded = []
    for text in texts:
        grown = text
        while len(grown.encode("utf-8")) - len(text.encode("utf-8")) < per_event:
            grown += rng.choice(_WORDS)
        padded.append(grown)
    return padded


def _render(texts: list[str], usage: dict[str, int]) -> bytes:
    parts = [_event(_chunk({"content": text}, None)) for text in texts]
    parts.append(_event(_chunk({}, "stop")))
    parts.append(_event({**_chunk({}, None), "choices": [], "usage": usage}))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def build_stream(events: int = FULL[0], min_bytes: int = FULL[1], seed: int = SEED) -> Stream:
    """The body of ``events`` content deltas, padded to at least ``min_bytes``."""
    if events < 1:
        raise ValueError("a stream needs at least one content event")
    rng = random.Random(seed)
    texts = _texts(events, rng)
    usage = {"prompt_tokens": 42, "completion_tokens": events, "total_tokens": events + 42}
    body = _render(texts, usage)
    if len(body) < min_bytes:
        texts = _pad(texts, min_bytes - len(body), rng)
        body = _render(texts, usage)
    return Stream(
        body=body,
        events=events + 3,
        content_events=events,
        content="".join(texts),
        usage=usage,
    )


def split_reads(body: bytes, size: int) -> list[bytes]:
    """``body`` cut into reads of ``size`` bytes (the last may be shorter)."""
    if size < 1:
        raise ValueError("a read is at least one byte")
    return [body[i : i + size] for i in range(0, len(body), size)]


if __name__ == "__main__":
    for name, (n, floor) in (("full", FULL), ("quick", QUICK)):
        stream = build_stream(n, floor)
        print(
            f"{name}: {len(stream.body):,} bytes, {stream.events:,} events, "
            f"sha256 {stream.sha256[:16]}"
        )
