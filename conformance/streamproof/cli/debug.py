"""``streamproof debug CASE --adapter X``: one case in the foreground, under a debugger if asked.

The adapter is loaded into this process (not a worker), so ``breakpoint()``
in a parser works, prints show on the terminal, and ``--pdb`` stops at the
exception where the parser raised it. It prints the outcome, the verdict
and the first divergence; exit 0 on a pass, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import pdb
import sys
import traceback

from ..errors import UsageError
from ..harness.loader import load_adapter
from ..harness.nodejs import BUILTIN
from ..harness.replay import find_case, replay_case
from ..harness.transports import DEFAULT_SEED, TRANSPORTS
from ..reporting.wire import terminal_lines, terminal_safe
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "case", metavar="CASE", help="a case id, or a run id as printed: 'CASE [TRANSPORT]'"
    )
    parser.add_argument(
        "--adapter",
        default="reference",
        metavar="SPEC",
        help="built-in name, path/to/adapter.py or a module (default: reference); "
        "cmd: adapters run in their own process: use run --trace for them",
    )
    parser.add_argument("--transport", choices=TRANSPORTS, help="default: whole, or the run id's")
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"seed of the random transport (default: {DEFAULT_SEED}, as for run)",
    )
    parser.add_argument(
        "--pdb", action="store_true", help="drop into the debugger where the adapter raised"
    )
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    case, named = find_case(args.case, args.corpus)
    replay = replay_case(case, args.transport or named or "whole", seed=args.seed)
    if args.adapter.startswith("cmd:") or args.adapter in BUILTIN:
        raise UsageError(
            f"{args.adapter} runs in a process of its own (not Python): debug loads a Python "
            f"adapter into this process; run it with: streamproof run --adapter {args.adapter} "
            f"--case '{case.id} [{replay.transport}]' -v"
        )
    adapter = load_adapter(args.adapter)
    about = f"{case.id} [{replay.transport}] with {adapter.name} {adapter.version}: {case.title}"
    print(terminal_safe(about))
    try:
        outcome, result = replay.run(adapter)
    except Exception:  # (its message may quote the case's bytes: shown escaped)
        print(terminal_lines(traceback.format_exc()), end="", file=sys.stderr)
        if args.pdb:
            pdb.post_mortem(sys.exc_info()[2])
        else:
            print("crash: the adapter raised (rerun with --pdb to stop there)")
        return 1
    print("--- outcome ---")
    print(terminal_lines(json.dumps(outcome, indent=2, ensure_ascii=False, default=repr)))
    verdict = result.verdict.value
    detail = f": {result.first_divergence}" if result.first_divergence else ""
    print(terminal_safe(f"--- {verdict}{detail}"))
    return 0 if verdict == "pass" else 1
