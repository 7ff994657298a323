"""Throughput of SSE stream parsers on the same bytes, in one run.

    python benchmarks/bench_parsers.py [--repeat N] [--read-size BYTES] [--json FILE] [--quick]

Every parser gets the same list of reads of the stream of ``streams.py``:

* ``reference``   streamproof's ResponseReader end to end (SSE, JSON, accumulation);
* ``sse+json``    streamproof's SSEDecoder alone, ``json.loads`` per event;
* ``httpx-sse``   ``httpx_sse.EventSource(response).iter_sse()`` on an ``httpx.Response``
                  streaming those reads, ``json.loads`` per event;
* ``openai-sse``  the openai SDK's private ``openai._streaming.SSEDecoder().iter_bytes``,
                  ``json.loads`` per event.

Each run is checked against what the stream holds (events, content, usage); a
parser that loses or changes data makes the script fail with exit status 1.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from streams import FULL, QUICK, Stream, build_stream, split_reads

from streamproof.reference import ResponseReader
from streamproof.reference.chat import ContentPiece, Outcome
from streamproof.reference.sse import SSEDecoder

TIMES = "\u00d7"  # the multiplication sign of "0.83x reference"


class Tally:
    """What a parser saw; the same bookkeeping for every parser but the reference."""

    __slots__ = ("content_events", "done", "events", "finish_reason", "pieces", "usage")

    def __init__(self) -> None:
        self.events = 0
        self.content_events = 0
        self.pieces: list[str] = []
        self.usage: Any = None
        self.finish_reason: Any = None
        self.done = False

    def take(self, data: str) -> None:
        self.events += 1
        if data == "[DONE]":
            self.done = True
            return
        chunk = json.loads(data)
        if chunk.get("usage") is not None:
            self.usage = chunk["usage"]
        for choice in chunk["choices"]:
            text = choice["delta"].get("content")
            if text:
                self.content_events += 1
                self.pieces.append(text)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]


# A parser returns a Tally, or the reference's (pieces, outcome).
Parser = Callable[[list[bytes]], Any]


def parse_reference(reads: list[bytes]) -> tuple[list[ContentPiece], Outcome]:
    reader = ResponseReader(200, {"content-type": "text/event-stream"}, {"stream": True})
    pieces = []
    for data in reads:
        pieces.extend(reader.feed(data))
    return pieces, reader.close()


def reference_tally(pieces: list[ContentPiece], outcome: Outcome) -> Tally:
    """The reference's result as a tally; built after the clock stops."""
    tally = Tally()
    tally.events = -1  # the reader does not expose its events
    tally.content_events = len(pieces)
    tally.pieces = [piece.content for piece in pieces]
    tally.usage = outcome["usage"]
    tally.done = outcome["status"] == "complete"
    if outcome["choices"]:
        tally.finish_reason = outcome["choices"][0]["finish_reason"]
        if outcome["choices"][0]["content"] != "".join(tally.pieces):
            tally.pieces.append("<the outcome's content differs from the pieces surfaced>")
    return tally


def parse_sse_json(reads: list[bytes]) -> Tally:
    tally = Tally()
    decoder = SSEDecoder()
    for data in reads:
        for event in decoder.feed(data):
            tally.take(event.data)
    decoder.close()
    return tally


def _httpx_sse() -> Parser:
    import httpx
    from httpx_sse import EventSource

    class Reads(httpx.SyncByteStream):
        def __init__(self, reads: list[bytes]) -> None:
            self._reads = reads

        def __iter__(self) -> Iterator[bytes]:
            yield from self._reads

    def parse(reads: list[bytes]) -> Tally:
        tally = Tally()
        headers = {"content-type": "text/event-stream"}
        response = httpx.Response(200, headers=headers, stream=Reads(reads))
        try:
            for sse in EventSource(response).iter_sse():
                tally.take(sse.data)
        finally:
            response.close()
        return tally

    return parse


def _openai_sse() -> Parser:
    from openai._streaming import SSEDecoder as OpenAIDecoder  # private: may move

    def parse(reads: list[bytes]) -> Tally:
        tally = Tally()
        for sse in OpenAIDecoder().iter_bytes(iter(reads)):
            tally.take(sse.data)
        return tally

    return parse


def parsers() -> tuple[dict[str, Parser], dict[str, str]]:
    """The parsers that import here, and why each missing one is missing."""
    found: dict[str, Parser] = {"reference": parse_reference, "sse+json": parse_sse_json}
    skipped: dict[str, str] = {}
    for name, make, dist in (
        ("httpx-sse", _httpx_sse, "httpx-sse"),
        ("openai-sse", _openai_sse, "openai"),
    ):
        try:
            found[name] = make()
        except ImportError as exc:
            skipped[name] = f"cannot import ({exc}); install '.[bench]'"
            if name == "openai-sse" and _version(dist) != "absent":
                skipped[name] = (
                    f"openai {_version(dist)} is installed but its private "
                    f"openai._streaming.SSEDecoder moved ({exc})"
                )
    return found, skipped


def check(name: str, tally: Tally, stream: Stream) -> list[str]:
    """How ``tally`` differs from what the stream holds (nothing when it does not)."""
    problems = []
    if tally.events not in (-1, stream.events):
        problems.append(f"{tally.events} events, the stream has {stream.events}")
    if tally.content_events != stream.content_events:
        problems.append(
            f"{tally.content_events} content events, the stream has {stream.content_events}"
        )
    if "".join(tally.pieces) != stream.content:
        problems.append("the concatenated content differs from the stream's")
    if tally.usage != stream.usage:
        problems.append(f"usage {tally.usage!r}, the stream has {stream.usage!r}")
    if tally.finish_reason != "stop" or not tally.done:
        problems.append(f"finish_reason {tally.finish_reason!r}, done {tally.done}")
    return [f"{name}: {p}" for p in problems]


def measure(
    found: dict[str, Parser], stream: Stream, read_size: int, repeat: int, warmup: int
) -> tuple[dict[str, list[float]], list[str]]:
    """Seconds per run of each parser, the parsers taking turns within each repeat."""
    reads = split_reads(stream.body, read_size)
    seconds: dict[str, list[float]] = {name: [] for name in found}
    problems: list[str] = []
    for round_ in range(warmup + repeat):
        for name, parse in found.items():
            gc.collect()
            started = time.perf_counter()
            result = parse(reads)
            elapsed = time.perf_counter() - started
            tally = result if isinstance(result, Tally) else reference_tally(*result)
            problems.extend(p for p in check(name, tally, stream) if p not in problems)
            if round_ >= warmup:
                seconds[name].append(elapsed)
    return seconds, problems


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per parser (default 7)")
    ap.add_argument("--read-size", type=int, default=4096, help="bytes per read (default 4096)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    ap.add_argument(
        "--quick", action="store_true", help="smoke check: 1 run, no warm-up, a 300 KB stream"
    )
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.read_size < 1:
        ap.error("--repeat and --read-size must be at least 1")
    repeat, warmup = (1, 0) if args.quick else (args.repeat, 1)
    stream = build_stream(*(QUICK if args.quick else FULL))
    found, skipped = parsers()
    megabytes = len(stream.body) / 1e6

    print(
        f"stream: {len(stream.body):,} bytes, {stream.events:,} events, "
        f"sha256 {stream.sha256[:16]}; median of {repeat} run(s) after {warmup} warm-up"
    )
    print(
        f"python {platform.python_version()}, streamproof {_version('streamproof')}, "
        f"httpx {_version('httpx')}, httpx-sse {_version('httpx-sse')}, "
        f"openai {_version('openai')}; MB = 10^6 bytes"
    )
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    print(f"\n{'read size':>9}  {'parser':<11} {'MB/s':>8}  vs reference")
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for read_size in sorted({args.read_size, 64}, reverse=True):
        seconds, found_problems = measure(found, stream, read_size, repeat, warmup)
        problems.extend(found_problems)
        rate = {name: megabytes / statistics.median(s) for name, s in seconds.items()}
        for name in found:
            ratio = rate[name] / rate["reference"]
            bad = any(p.startswith(f"{name}: ") for p in found_problems)
            print(
                f"{read_size:>9}  {name:<11} {rate[name]:>8.2f}  {ratio:.2f}{TIMES} reference"
                + ("  DATA MISMATCH" if bad else "")
            )
            rows.append(
                {
                    "parser": name,
                    "read_size": read_size,
                    "median_mb_per_s": round(rate[name], 3),
                    "ratio_to_reference": round(ratio, 4),
                    "seconds": [round(s, 6) for s in seconds[name]],
                }
            )
    if args.json is not None:
        figures = {
            "stream": {"bytes": len(stream.body), "events": stream.events, "sha256": stream.sha256},
            "repeat": repeat,
            "warmup": warmup,
            "python": platform.python_version(),
            "versions": {d: _version(d) for d in ("streamproof", "httpx", "httpx-sse", "openai")},
            "results": rows,
            "skipped": skipped,
            "problems": problems,
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if problems:
        print("\nDATA MISMATCH: these figures are worthless", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print("\nall parsers saw every event, the same content and the same usage")
    return 0


if __name__ == "__main__":
    sys.exit(main())
