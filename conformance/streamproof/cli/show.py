"""``streamproof show CASE``: one case's stream and expectation."""

from __future__ import annotations

import argparse
import json

from ..corpus.cases import Case, load_corpus
from ..errors import UsageError
from ..harness.selection import split_run_id
from ..harness.transports import DEFAULT_SEED, TRANSPORTS, boundaries
from ..reporting.wire import terminal_lines, terminal_safe, wire_view
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "case", metavar="CASE", help="a case id, or a run id as printed: 'CASE [TRANSPORT]'"
    )
    parser.add_argument("--transport", choices=TRANSPORTS, help="mark this transport's reads")
    parser.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"seed of the random transport (default: {DEFAULT_SEED}, as for run)",
    )
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
    ends = (
        boundaries(case.body, transport, seed=args.seed, case_dir=case.dir) if transport else None
    )
    for line in _about(case):  # each one line, whatever it holds
        print(terminal_safe(line))
    reads = f", reads marked ¦ ({transport})" if ends else ""
    print(terminal_safe(f"--- {case.data['response']['body']} ({len(case.body)} bytes{reads}) ---"))
    print(wire_view(case.body, ends))  # (made visible: no byte of it acts on the terminal)
    key = "expected" if "expected" in case.data else "expected_any"
    print(f"--- {key} ---")
    print(terminal_lines(json.dumps(case.data[key], indent=2, ensure_ascii=False)))
    return 0


def _about(case: Case) -> list[str]:
    """The lines that say what the case is, where it comes from and what it sent."""
    data = case.data
    response, provenance = data["response"], data["provenance"]
    lines = [f"{case.id} [{case.severity}] {case.title}"]
    if data.get("comment"):
        lines.append(f"  {data['comment']}")
    lines.append(f"provenance: {provenance['kind']}: {provenance['source']}")
    if provenance.get("observed"):
        lines.append(f"observed: {provenance['observed']}")
    if provenance.get("route"):  # a router or gateway the bytes came through
        lines.append(f"route: {provenance['route']}")
    lines += [
        f"requires: {', '.join(sorted(case.requires)) or '(nothing)'}",
        f"tags: {', '.join(data.get('tags', [])) or '(none)'}",
        f"spec: {'; '.join(data.get('spec', [])) or '(none)'}",
        f"request: {json.dumps(data.get('request', {}), ensure_ascii=False)}",
        f"HTTP {response['status']}  "
        + "  ".join(f"{k}: {v}" for k, v in response["headers"].items()),
    ]
    return lines
