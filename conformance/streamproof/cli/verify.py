"""``streamproof verify RESULTS``: check a results file against its corpus, and badge it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..reporting.coverage import coverage_line
from ..reporting.verify import as_corpus, badge_document, read_document, verify, write_json
from ..reporting.wire import terminal_safe

__all__ = ["add_arguments", "run"]

# Problems printed before the rest are counted.
SHOWN_PROBLEMS = 40


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", type=Path, metavar="RESULTS", help="a results file (run --json)")
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="the corpus the file claims (default: the corpus shipped with streamproof)",
    )
    parser.add_argument(
        "--badge",
        type=Path,
        metavar="FILE",
        help="write a shields.io endpoint badge here, only if the file is verified",
    )


def run(args: argparse.Namespace) -> int:
    """``streamproof verify``: 0 verified, 1 not (problems on stderr).

    A missing file or corpus raises ``OSError`` / ``CorpusError``, which the
    command line turns into exit 2.
    """
    corpus = as_corpus(args.corpus)
    problems = verify(args.results, corpus)
    if problems:
        for problem in problems[:SHOWN_PROBLEMS]:
            print(terminal_safe(problem), file=sys.stderr)
        if len(problems) > SHOWN_PROBLEMS:
            print(f"… and {len(problems) - SHOWN_PROBLEMS} more", file=sys.stderr)
        print(f"not verified: {len(problems)} problem(s) in {args.results}", file=sys.stderr)
        if args.badge:
            print(f"no badge written: {args.results} is not verified", file=sys.stderr)
        return 1
    document, _ = read_document(args.results)
    adapter = document["adapter"]
    summary = document["summary"]
    line = (
        f"verified: {args.results}: {adapter['name']} {adapter['version']} on corpus "
        f"{corpus.version} (sha256 {corpus.sha256}), {summary['total']} case runs, "
        f"{summary['passed']} passed"
    )
    print(terminal_safe(line))
    for severity, figures in summary.get("by_severity", {}).items():
        if figures["runs"]:
            print(f"  {coverage_line(severity, figures)}")
    if args.badge:
        badge = badge_document(document, corpus)
        write_json(args.badge, badge)
        print(f"badge: {args.badge} ({badge['label']}: {badge['message']}, {badge['color']})")
    return 0
