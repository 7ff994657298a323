"""``streamproof record``: capture one live response as a case awaiting review."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..live.record import SCENARIOS, record_main

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", required=True, metavar="URL", help="e.g. https://host/v1")
    parser.add_argument("--model", required=True, metavar="M", help="the model to ask")
    parser.add_argument(
        "--api-key-env", metavar="VAR", help="environment variable holding the API key"
    )
    parser.add_argument(
        "--scenario", required=True, metavar="NAME", help=f"one of {', '.join(SCENARIOS)}"
    )
    parser.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="corpus/cases/<provider>/<slug>"
    )
    parser.add_argument(
        "--provider", metavar="P", help="the case's provider (default: the folder above --out)"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, metavar="S", help="seconds (default: 120)"
    )


def run(args: argparse.Namespace) -> int:
    return record_main(args)
