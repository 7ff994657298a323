"""``streamproof check-adapter SPEC``: play the protocol's situations against an adapter.

For each situation it prints what the protocol requires and what the
adapter did; exit 0 only when every required behaviour holds, 1 otherwise,
2 when the adapter cannot be started at all. The parser's verdicts are not
judged: ``run`` does that.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..harness.adapter_check import check_adapter
from ..harness.trace import TraceFile
from ..reporting.wire import terminal_safe
from .inputs import MAX_TIMEOUT, check_timeout

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "adapter",
        metavar="SPEC",
        help='the adapter: "cmd:COMMAND" for a program in any language (docs/protocol.md), '
        "or a built-in name, path/to/adapter.py or a module (run through the worker)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help=f"time for each reply, at most {MAX_TIMEOUT} "
        "(default: 10; the handshake gets at least 10)",
    )
    parser.add_argument(
        "--trace",
        type=Path,
        metavar="FILE",
        help="write every protocol line to and from the adapter here, one JSON line each",
    )


def run(args: argparse.Namespace) -> int:
    check_timeout(args.timeout)
    trace = TraceFile(args.trace, append=False) if args.trace else None
    failed: list[str] = []
    total = 0
    print(f"check-adapter {terminal_safe(args.adapter)}")
    try:
        for check in check_adapter(args.adapter, timeout=args.timeout, trace=trace):
            total += 1
            if not check.ok:
                failed.append(check.rule)
            mark = "ok  " if check.ok else "FAIL"
            print(f"{mark}  {check.rule}: {terminal_safe(check.requires)}")
            print(f"        the adapter: {terminal_safe(check.did)}", flush=True)
    finally:
        if trace is not None:
            trace.close()
    if failed:
        print(f"{len(failed)} of {total} required behaviours fail: {', '.join(failed)}")
        return 1
    print(f"all {total} required behaviours hold")
    return 0
