"""``streamproof show CASE``: one case's stream and expectation."""

from __future__ import annotations

import argparse
import json

from ..corpus.cases import load_corpus
from ..errors import UsageError
from ..harness.transports import TRANSPORTS, boundaries
from ..reporting.wire import wire_view
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("case", metavar="CASE")
    parser.add_argument("--transport", choices=TRANSPORTS, help="mark this transport's reads")
    parser.add_argument("--seed", type=int, default=0)
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    case = next((c for c in corpus.cases if c.id == args.case), None)
    if case is None:
        raise UsageError(f"no case {args.case!r} (see 'streamproof list')")
    response = case.data["response"]
    print(f"{case.id} [{case.severity}] {case.title}")
    if case.data.get("comment"):
        print(f"  {case.data['comment']}")
    print(f"provenance: {case.data['provenance']['kind']}: {case.data['provenance']['source']}")
    print(
        f"HTTP {response['status']}  "
        + "  ".join(f"{k}: {v}" for k, v in response["headers"].items())
    )
    ends = (
        boundaries(case.body, args.transport, seed=args.seed, case_dir=case.dir)
        if args.transport
        else None
    )
    print(
        f"--- {response['body']} ({len(case.body)} bytes)"
        + (f", reads marked ¦ ({args.transport})" if ends else "")
        + " ---"
    )
    print(wire_view(case.body, ends))
    key = "expected" if "expected" in case.data else "expected_any"
    print(f"--- {key} ---")
    print(json.dumps(case.data[key], indent=2, ensure_ascii=False))
    return 0
