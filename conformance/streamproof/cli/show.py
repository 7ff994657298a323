"""``streamproof show CASE``: one case's stream and expectation."""

from __future__ import annotations

import argparse
import json

from ..corpus.cases import load_corpus
from ..errors import UsageError
from ..harness.selection import split_run_id
from ..harness.transports import TRANSPORTS, boundaries
from ..reporting.wire import wire_view
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "case", metavar="CASE", help="a case id, or a run id as printed: 'CASE [TRANSPORT]'"
    )
    parser.add_argument("--transport", choices=TRANSPORTS, help="mark this transport's reads")
    parser.add_argument("--seed", type=int, default=0)
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    corpus = load_corpus(args.corpus)
    case_id, transport = split_run_id(args.case)
    case = next((c for c in corpus.cases if c.id == case_id), None)
    if case is None:
        raise UsageError(f"no case {case_id!r} (see 'streamproof list')")
    transport = args.transport or transport
    if transport == "recorded" and not case.has_chunks:
        raise UsageError(
            f"{case.id} has no recorded reads (no chunks.json): choose another transport"
        )
    data = case.data
    response = data["response"]
    print(f"{case.id} [{case.severity}] {case.title}")
    if data.get("comment"):
        print(f"  {data['comment']}")
    provenance = data["provenance"]
    print(f"provenance: {provenance['kind']}: {provenance['source']}")
    if provenance.get("observed"):
        print(f"observed: {provenance['observed']}")
    print(f"requires: {', '.join(sorted(case.requires)) or '(nothing)'}")
    print(f"tags: {', '.join(data.get('tags', [])) or '(none)'}")
    print(f"spec: {'; '.join(data.get('spec', [])) or '(none)'}")
    print(f"request: {json.dumps(data.get('request', {}), ensure_ascii=False)}")
    print(
        f"HTTP {response['status']}  "
        + "  ".join(f"{k}: {v}" for k, v in response["headers"].items())
    )
    ends = (
        boundaries(case.body, transport, seed=args.seed, case_dir=case.dir) if transport else None
    )
    print(
        f"--- {response['body']} ({len(case.body)} bytes)"
        + (f", reads marked ¦ ({transport})" if ends else "")
        + " ---"
    )
    print(wire_view(case.body, ends))
    key = "expected" if "expected" in case.data else "expected_any"
    print(f"--- {key} ---")
    print(json.dumps(case.data[key], indent=2, ensure_ascii=False))
    return 0
