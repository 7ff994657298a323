"""Throughput of SSE stream parsers on the same bytes, in one run.

    python benchmarks/bench_parsers.py [--repeat N] [--read-size BYTES ...]
        [--memory] [--json FILE] [--quick]

Every parser gets the same list of reads of the stream of ``streams.py`` and
the same JSON loader, the one the reference reads chunks with (the standard
library's ``json``, its C scanner called directly: ``fastjson.exact_loads``):

* ``reference``   streamproof's ResponseReader end to end (SSE, JSON, the whole
                  outcome and the content deltas, as the reference adapter keeps them);
* ``naive``       the floor: the reads joined, split at LF, ``loads`` on each ``data: `` line;
* ``sse+json``    streamproof's SSEDecoder alone, ``loads`` per event;
* ``httpx-sse``   ``httpx_sse.EventSource(response).iter_sse()`` on an ``httpx.Response``
                  streaming those reads, ``loads`` per event;
* ``sseclient-py`` ``sseclient.SSEClient(reads).events()``, ``loads`` per event;
* ``openai-sse``  the openai SDK's private ``openai._streaming.SSEDecoder().iter_bytes``,
                  ``loads`` per event.

Each run is checked against what the stream holds (events, content, usage); a
parser that loses or changes data makes the script fail with exit status 1.
``--memory`` measures, with ``tracemalloc`` and untimed, the memory the
reference needs beyond its input for one large event read in small reads.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from streams import FULL, QUICK, Stream, build_stream, split_reads

from streamproof.reference import ResponseReader, fastjson
from streamproof.reference.chat import ContentPiece, Outcome
from streamproof.reference.sse import SSEDecoder

TIMES = "\u00d7"  # the multiplication sign of "0.83x"
Loads = Callable[[Any], Any]
_DONE = ("[DONE]", b"[DONE]")
SSE_LIBRARIES = ("httpx-sse", "sseclient-py")


class Tally:
    """What a parser saw; the same bookkeeping for every parser but the reference."""

    __slots__ = ("content_events", "done", "events", "finish_reason", "loads", "pieces", "usage")

    def __init__(self, loads: Loads) -> None:
        self.loads = loads
        self.events = 0
        self.content_events = 0
        self.pieces: list[str] = []
        self.usage: Any = None
        self.finish_reason: Any = None
        self.done = False

    def take(self, data: str | bytes) -> None:
        self.events += 1
        if data in _DONE:
            self.done = True
            return
        chunk = self.loads(data)
        if chunk.get("usage") is not None:
            self.usage = chunk["usage"]
        for choice in chunk["choices"]:
            text = choice["delta"].get("content")
            if text:
                self.content_events += 1
                self.pieces.append(text)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]


# A parser takes the reads and the loader, and returns a Tally or the
# reference's (deltas, outcome).
Parser = Callable[[list[bytes], Loads], Any]


def parse_reference(reads: list[bytes], loads: Loads) -> tuple[list[ContentPiece], Outcome]:
    """The whole outcome, and the content deltas in the order they surfaced."""
    reader = ResponseReader(200, {"content-type": "text/event-stream"}, {"stream": True})
    deltas: list[ContentPiece] = []
    for data in reads:
        deltas += reader.feed(data)
    return deltas, reader.close()


def reference_tally(deltas: list[ContentPiece], outcome: Outcome) -> Tally:
    """The reference's result as a tally; built after the clock stops."""
    tally = Tally(json.loads)
    tally.events = -1  # the reader does not expose its events
    tally.content_events = len(deltas)
    tally.pieces = [text for _, text in deltas]
    tally.usage = outcome["usage"]
    tally.done = outcome["status"] == "complete"
    if outcome["choices"]:
        tally.finish_reason = outcome["choices"][0]["finish_reason"]
        if outcome["choices"][0]["content"] != "".join(tally.pieces):
            tally.pieces.append("<the outcome's content differs from the pieces surfaced>")
    return tally


def parse_naive(reads: list[bytes], loads: Loads) -> Tally:
    """The floor: split the bytes into lines and load each data line, nothing else."""
    tally = Tally(loads)
    rest = b""
    for data in reads:
        lines = (rest + data).split(b"\n")
        rest = lines.pop()
        for line in lines:
            if line.startswith(b"data: "):
                tally.take(line[6:])
    return tally


def parse_sse_json(reads: list[bytes], loads: Loads) -> Tally:
    tally = Tally(loads)
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

    def parse(reads: list[bytes], loads: Loads) -> Tally:
        tally = Tally(loads)
        headers = {"content-type": "text/event-stream"}
        response = httpx.Response(200, headers=headers, stream=Reads(reads))
        try:
            for sse in EventSource(response).iter_sse():
                tally.take(sse.data)
        finally:
            response.close()
        return tally

    return parse


def _sseclient() -> Parser:
    from sseclient import SSEClient

    def parse(reads: list[bytes], loads: Loads) -> Tally:
        tally = Tally(loads)
        for sse in SSEClient(iter(reads)).events():
            tally.take(sse.data)
        return tally

    return parse


def _openai_sse() -> Parser:
    from openai._streaming import SSEDecoder as OpenAIDecoder  # private: may move

    def parse(reads: list[bytes], loads: Loads) -> Tally:
        tally = Tally(loads)
        for sse in OpenAIDecoder().iter_bytes(iter(reads)):
            tally.take(sse.data)
        return tally

    return parse


def parsers() -> tuple[dict[str, Parser], dict[str, str]]:
    """The parsers that import here, and why each missing one is missing."""
    found: dict[str, Parser] = {
        "reference": parse_reference,
        "naive": parse_naive,
        "sse+json": parse_sse_json,
    }
    skipped: dict[str, str] = {}
    for name, make, dist in (
        ("httpx-sse", _httpx_sse, "httpx-sse"),
        ("sseclient-py", _sseclient, "sseclient-py"),
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
    found: dict[str, Parser], stream: Stream, read_size: int, repeat: int, warmup: int, loads: Loads
) -> tuple[dict[str, list[float]], list[str]]:
    """CPU seconds per run of each parser, the parsers taking turns within each repeat.

    CPU time, not wall time: the machines this runs on are shared, and wall
    time there says more about the neighbours than about the parser.
    """
    reads = split_reads(stream.body, read_size)
    seconds: dict[str, list[float]] = {name: [] for name in found}
    problems: list[str] = []
    for round_ in range(warmup + repeat):
        for name, parse in found.items():
            gc.collect()
            started = time.process_time()
            result = parse(reads, loads)
            elapsed = time.process_time() - started
            tally = result if isinstance(result, Tally) else reference_tally(*result)
            problems.extend(p for p in check(name, tally, stream) if p not in problems)
            if round_ >= warmup:
                seconds[name].append(elapsed)
    return seconds, problems


def large_event_body(size: int) -> bytes:
    """One chunk whose content is ``size`` bytes of ASCII, a finish chunk and [DONE]."""
    content = (b"0123456789abcdef" * (size // 16 + 1))[:size]
    head = b'data: {"id":"x","choices":[{"index":0,"delta":{"content":"'
    return (
        head
        + content
        + b'"}}]}\n\n'
        + b'data: {"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        + b"data: [DONE]\n\n"
    )


def memory(sizes: list[int], read_size: int) -> list[dict[str, Any]]:
    """Peak memory beyond the input while the reference reads one large event (untimed)."""
    rows = []
    for size in sizes:
        reads = split_reads(large_event_body(size), read_size)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        deltas, outcome = parse_reference(reads, json.loads)
        peak = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
        if len(outcome["choices"][0]["content"]) != size or outcome["status"] != "complete":
            raise SystemExit(f"DATA MISMATCH: the {size}-byte event was not read whole")
        del deltas, outcome
        gc.collect()
        started = time.process_time()
        parse_reference(reads, json.loads)
        cpu = time.process_time() - started
        rows.append(
            {
                "event_bytes": size,
                "read_size": read_size,
                "reads": len(reads),
                "peak_extra_bytes": peak,
                "ratio": round(peak / size, 3),
                "cpu_seconds": round(cpu, 4),
            }
        )
    return rows


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def _print_memory(rows: list[dict[str, Any]]) -> None:
    print(f"\none large event, {rows[0]['read_size']}-byte reads, reference (tracemalloc, untimed)")
    print(f"{'event MiB':>9} {'reads':>7} {'extra MiB':>9} {'x event':>8} {'CPU s/MiB':>9}")
    for row in rows:
        mib = row["event_bytes"] / 2**20
        print(
            f"{mib:>9.0f} {row['reads']:>7,} {row['peak_extra_bytes'] / 2**20:>9.1f} "
            f"{row['ratio']:>7.2f}{TIMES} {row['cpu_seconds'] / mib:>9.4f}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per parser (default 7)")
    ap.add_argument(
        "--read-size",
        type=int,
        action="append",
        metavar="BYTES",
        help="bytes per read, repeatable (default 65536, 4096 and 64)",
    )
    ap.add_argument(
        "--memory", action="store_true", help="also the memory of one 1 to 8 MiB event, 1 KiB reads"
    )
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures here")
    ap.add_argument(
        "--quick", action="store_true", help="smoke check: 1 run, no warm-up, a 300 KB stream"
    )
    args = ap.parse_args(argv)
    read_sizes = sorted(set(args.read_size or [65536, 4096, 64]), reverse=True)
    if args.repeat < 1 or min(read_sizes) < 1:
        ap.error("--repeat and --read-size must be at least 1")
    # The very function the reference reads chunks with: the standard
    # library's json, its C scanner called directly (fastjson.exact_loads).
    loads: Loads = fastjson.exact_loads
    loader = "json"
    repeat, warmup = (1, 0) if args.quick else (args.repeat, 1)
    stream = build_stream(*(QUICK if args.quick else FULL))
    found, skipped = parsers()
    megabytes = len(stream.body) / 1e6

    print(
        f"stream: {len(stream.body):,} bytes, {stream.events:,} events, "
        f"sha256 {stream.sha256[:16]}; median of {repeat} run(s) after {warmup} warm-up"
    )
    print(
        f"python {platform.python_version()}, loader {loader} (every parser), "
        + ", ".join(f"{d} {_version(d)}" for d in VERSIONED)
        + "; MB = 10^6 bytes"
    )
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    print(f"\n{'read size':>9}  {'parser':<12} {'MB/s':>8}  reference {chr(247)} parser")
    rows: list[dict[str, Any]] = []
    targets: list[dict[str, Any]] = []
    problems: list[str] = []
    for read_size in read_sizes:
        seconds, found_problems = measure(found, stream, read_size, repeat, warmup, loads)
        problems.extend(found_problems)
        rate = {name: megabytes / statistics.median(s) for name, s in seconds.items()}
        for name in found:
            ratio = rate["reference"] / rate[name]
            bad = any(p.startswith(f"{name}: ") for p in found_problems)
            print(
                f"{read_size:>9}  {name:<12} {rate[name]:>8.2f}  {ratio:.2f}{TIMES}"
                + ("  DATA MISMATCH" if bad else "")
            )
            rows.append(
                {
                    "parser": name,
                    "read_size": read_size,
                    "median_mb_per_s": round(rate[name], 3),
                    "reference_over_parser": round(ratio, 4),
                    "seconds": [round(s, 6) for s in seconds[name]],
                }
            )
        libraries = [name for name in SSE_LIBRARIES if name in rate]
        fastest = max(libraries, key=rate.__getitem__) if libraries else None
        target = {
            "read_size": read_size,
            "over_naive": round(rate["reference"] / rate["naive"], 4),
            "fastest_library": fastest,
            "over_fastest_library": round(rate["reference"] / rate[fastest], 4)
            if fastest
            else None,
        }
        targets.append(target)
        print(
            f"{'':>9}  reference {target['over_naive']:.2f}{TIMES} naive (target 0.9)"
            + (
                f", {target['over_fastest_library']:.2f}{TIMES} {fastest} (target 1.2)"
                if fastest
                else ""
            )
        )
    memory_rows: list[dict[str, Any]] = []
    if args.memory:
        sizes = [2**20] if args.quick else [2**20, 2**21, 2**22, 2**23]
        memory_rows = memory(sizes, 1024)
        _print_memory(memory_rows)
    if args.json is not None:
        figures = {
            "stream": {"bytes": len(stream.body), "events": stream.events, "sha256": stream.sha256},
            "repeat": repeat,
            "warmup": warmup,
            "loader": loader,
            "python": platform.python_version(),
            "versions": {d: _version(d) for d in ("streamproof", *VERSIONED)},
            "results": rows,
            "targets": targets,
            "memory": memory_rows,
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


VERSIONED = ("httpx", "httpx-sse", "sseclient-py", "openai")


if __name__ == "__main__":
    sys.exit(main())
