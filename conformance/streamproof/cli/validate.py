"""``streamproof validate``: check the corpus, one line per problem."""

from __future__ import annotations

import argparse
import sys

from ..corpus.cases import default_root, load_corpus
from ..corpus.validate import check_corpus
from ..harness.selection import awaiting_review
from ..reporting.wire import terminal_safe
from .options import add_corpus_option

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_corpus_option(parser)


def run(args: argparse.Namespace) -> int:
    root = (args.corpus or default_root()).resolve()
    problems = check_corpus(root)
    for problem in problems:
        print(terminal_safe(problem), file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in {root}", file=sys.stderr)
        return 2
    corpus = load_corpus(root, cached=False)  # (every byte read, as the checks did)
    for case in awaiting_review(corpus.cases):
        print(terminal_safe(f"{case.id}: recorded, awaits review (streamproof review {case.id})"))
    ok = f"ok: {len(corpus.cases)} cases, corpus {corpus.version} (sha256 {corpus.sha256})"
    print(terminal_safe(ok))
    return 0
