"""``streamproof scaling``: how an adapter's cost grows, and its throughput.

For each dimension (one event's size, the number of events, of tool-call
fragments, of 1-byte reads) the adapter gets streams of growing size; the
verdict is ``linear``, ``superlinear`` (with the fitted exponent) or
``timeout`` (``streamproof.fuzz.scaling`` says how it is decided). A verdict
family apart from correctness: the exit status is 0 whatever the verdicts,
2 on a usage error. ``--json FILE`` writes the results; ``--merge FILE``
adds them to an existing results file (``reports/scaling.json``), dimension
by dimension.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..errors import UsageError
from ..harness.strict_json import read_document
from ..reporting.wire import terminal_safe
from .inputs import MAX_TIMEOUT, check_outputs, check_timeout

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--adapter",
        action="append",
        metavar="SPEC",
        help="adapter (repeatable; default: reference)",
    )
    parser.add_argument(
        "--dimension",
        action="append",
        metavar="NAME",
        help="event-size, events, tool-fragments or reads (repeatable; default: all)",
    )
    parser.add_argument(
        "--sizes", metavar="N,N,...", help="sizes to run instead (with one --dimension)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="stop at a quarter of the full largest size"
    )
    parser.add_argument(
        "--repeat", type=int, default=2, help="runs per size, best kept (default 2)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="S",
        help=f"seconds per run, at most {MAX_TIMEOUT} (default 60)",
    )
    parser.add_argument("--no-throughput", action="store_true", help="skip the throughput figure")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the results here")
    parser.add_argument(
        "--merge", type=Path, metavar="FILE", help="add the results to this results file"
    )


def _options(args: argparse.Namespace) -> tuple[list[str], list[int] | None]:
    from ..fuzz.families import FAMILIES

    names = args.dimension or []
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        raise UsageError(f"unknown dimension {unknown[0]!r}; expected one of {', '.join(FAMILIES)}")
    sizes = None
    if args.sizes is not None:
        if len(names) != 1:
            raise UsageError("--sizes needs exactly one --dimension")
        try:
            sizes = [int(s) for s in args.sizes.split(",")]
        except ValueError:
            raise UsageError(f"--sizes: {args.sizes!r} is not a list of integers") from None
        if len(sizes) < 2 or any(s < 1 for s in sizes) or sizes != sorted(set(sizes)):
            raise UsageError(f"--sizes: {args.sizes!r} must be two or more growing positive sizes")
    if args.repeat < 1:
        raise UsageError(f"--repeat must be at least 1, not {args.repeat}")
    check_timeout(args.timeout)
    return names, sizes


def run(args: argparse.Namespace) -> int:
    names, sizes = _options(args)
    check_outputs({"--json": args.json, "--merge": args.merge})  # before the long part
    from ..fuzz import scaling
    from ..fuzz.timing import TimedAdapter

    merged: dict[str, Any] = {}
    if args.merge is not None and args.merge.exists():
        try:
            merged = dict(read_document(args.merge)["adapters"])
        except (ValueError, KeyError, TypeError):
            raise UsageError(f"{args.merge}: not a scaling results file") from None
    results: dict[str, Any] = {}
    for spec in args.adapter or ["reference"]:
        process = TimedAdapter(spec)
        process.start()
        try:
            version = "" if process.version == "unknown" else f" {process.version}"
            print(terminal_safe(f"{process.name}{version}"))
            dimensions = scaling.scale(
                process,
                scaling.families_named(names),
                quick=args.quick,
                sizes=sizes,
                repeat=args.repeat,
                timeout=args.timeout,
                on_point=_show_point,
            )
            speed = None
            if not args.no_throughput:
                speed = scaling.throughput(process, repeat=args.repeat + 1, timeout=args.timeout)
            results[process.name] = scaling.adapter_entry(process, dimensions, speed)
        finally:
            process.close()
        for dimension in dimensions:
            print(_verdict_line(dimension))
        if speed is not None:
            reference = None
            if process.name != "reference":
                reference = results.get("reference") or merged.get("reference")
            print(_speed_line(speed, reference))
    document = scaling.document(scaling.merge(merged, results))
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    for path in (args.json, args.merge):
        if path is not None:
            write_atomic(path, text)
    return 0


def _show_point(name: str, point: Any) -> None:
    took = "timeout" if point.seconds is None else f"{point.seconds * 1000:.1f} ms"
    print(f"  {name:<15} {point.size:>9}  {took}", flush=True)


def _verdict_line(dimension: Any) -> str:
    found = dimension.exponent
    shown = "" if found is None else f" (exponent {found:.2f})"
    return f"  {dimension.name:<15} {dimension.verdict}{shown}"


def _speed_line(speed: dict[str, Any], reference: dict[str, Any] | None) -> str:
    if "mb_per_s" not in speed:
        return f"  throughput      {speed.get('problem', 'none')}"
    line = f"  throughput      {speed['mb_per_s']} MB/s, {speed['chunks_per_s']} chunks/s"
    theirs = (reference or {}).get("throughput", {}).get("mb_per_s")
    if theirs:
        line += f" ({speed['mb_per_s'] / theirs:.2f}x the reference's {theirs} MB/s)"
    return line
