"""``streamproof serve``: replay the corpus over HTTP for real clients, until Ctrl-C."""

from __future__ import annotations

import argparse
import time
from functools import partial
from pathlib import Path
from typing import Any

from ..corpus.cases import load_corpus
from ..harness.transports import DEFAULT_SEED, TRANSPORTS
from ..live.serve import ReplayServer, is_stream
from ..reporting.wire import terminal_safe

__all__ = ["add_arguments", "run"]


def _number(value: str, low: float) -> float:
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not low <= number < float("inf"):  # NaN fails too
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of at least {low:g}")
    return number


def _port(value: str) -> int:
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port (0 to 65535)")
    return int(value)


_at_least_0 = partial(_number, low=0.0)
_OPTIONS: tuple[tuple[str, Any, Any, str | None, str], ...] = (
    ("--host", str, "127.0.0.1", None, "address to bind (default: 127.0.0.1)"),
    ("--port", _port, 0, None, "port to bind (default: 0, any free port)"),
    # run's default seed, so a failure under the random transport replays as it ran
    ("--seed", int, DEFAULT_SEED, None, f"seed of the random transport (default: {DEFAULT_SEED})"),
    ("--chunk-delay", _at_least_0, 0.0, "MS", "wait before every read but the first"),
    ("--first-byte-delay", _at_least_0, 0.0, "MS", "wait between the head and the first read"),
    ("--delay-scale", _at_least_0, 1.0, "F", "multiply every delay, recorded ones too"),
    (
        "--keepalive",
        partial(_number, low=1e-3),
        None,
        "SECONDS",
        "': keep-alive' between events when idle",
    ),
    ("--corpus", Path, None, "DIR", "corpus folder (default: the one shipped)"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for flag, kind, default, metavar, text in _OPTIONS:
        parser.add_argument(flag, type=kind, default=default, metavar=metavar, help=text)
    parser.add_argument(
        "--transport", choices=TRANSPORTS, default="whole", help="reads of a case named by model"
    )


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C."""
    corpus = load_corpus(args.corpus)
    server = ReplayServer(
        corpus,
        host=args.host,
        port=args.port,
        transport=args.transport,
        seed=args.seed,
        chunk_delay=args.chunk_delay / 1000,
        first_byte_delay=args.first_byte_delay / 1000,
        delay_scale=args.delay_scale,
        keepalive=args.keepalive,
        log=lambda line: print(terminal_safe(line), flush=True),
    )
    url = server.start()
    streams = (c.id for c in corpus.cases if c.status == 200 and is_stream(c))
    example = next(streams, corpus.cases[0].id)
    try:
        print(
            f"serving {len(corpus.cases)} cases on {url} "
            f"(try: curl -N -X POST {url}/cases/{example}/lines/v1/chat/completions)",
            flush=True,
        )
        while True:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
