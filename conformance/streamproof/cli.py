"""The ``streamproof`` command: a thin layer over the library.

Exit status: 0 success, 1 conformance failures, 2 usage or corpus error
(one line naming the file and the problem, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from . import lint as lint_command
from . import nodejs, serve
from .__about__ import __version__
from .adapter import AdapterError
from .chunking import TRANSPORTS, boundaries, parse_transports
from .claims import add_verify_arguments, cmd_verify
from .corpus import Corpus, CorpusError, default_root, load_corpus
from .diffing import add_diff_arguments, cmd_diff
from .display import wire_view
from .harness import RunOptions
from .linting import check_corpus, write_manifest
from .matrix import MatrixError, write_matrix
from .providers_report import write_provider_report
from .quirks import load_quirks, readme_with_tables, tables
from .record import add_record_arguments, record_main
from .results import SEVERITIES
from .review import add_review_arguments, awaiting_review, review_main
from .run_command import DEFAULT_REPORT, RunError, execute_run

__all__ = ["main"]


class UsageError(Exception):
    """A mistake in the command line: one line, exit 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamproof",
        description="Conformance suite for parsers of OpenAI-compatible chat responses.",
    )
    parser.add_argument("--version", action="version", version=f"streamproof {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = sub.add_parser("run", help="score an adapter against the corpus")
    run.add_argument(
        "--adapter",
        metavar="SPEC",
        help="built-in name, path/to/adapter.py or a module (default: reference)",
    )
    run.add_argument(
        "--transport",
        default="all",
        metavar="LIST",
        help=f"'all' or a comma list of {', '.join(TRANSPORTS)}",
    )
    run.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="GLOB",
        help="only cases whose id matches (repeatable)",
    )
    run.add_argument(
        "--seed",
        type=int,
        help="seed of the random transport (default: a new one each run, printed)",
    )
    run.add_argument(
        "--fail-on",
        choices=SEVERITIES,
        default="may",
        help="lowest severity whose failures fail the run (default: may)",
    )
    run.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="per case-run timeout (default: 10 s + 30 s per MB of body)",
    )
    run.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="run N adapter processes in parallel (default: 1)",
    )
    run.add_argument(
        "--http",
        action="store_true",
        help="score the adapter's call(base_url, request) over real HTTP (replay server)",
    )
    run.add_argument(
        "--expect",
        type=Path,
        metavar="FILE",
        help="known failures: listed failures are xfail, listed passes xpass",
    )
    run.add_argument("--json", type=Path, metavar="FILE", help="write results JSON here")
    run.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="write the verdicts alone (no timings or dates) here, for diffs",
    )
    run.add_argument("--html", type=Path, metavar="FILE", help="write a pytest-html report here")
    run.add_argument(
        "--write-expect",
        type=Path,
        metavar="FILE",
        help="write today's failures here as a known-failures file for --expect",
    )
    run.add_argument("--junit", type=Path, metavar="FILE", help="write JUnit XML here")
    _corpus_option(run)

    lst = sub.add_parser("list", help="list the cases")
    lst.add_argument(
        "--provider",
        action="append",
        default=[],
        metavar="NAME",
        help="only this provider's cases (repeatable)",
    )
    _corpus_option(lst)
    show = sub.add_parser("show", help="show one case's stream and expectation")
    show.add_argument("case", metavar="CASE")
    show.add_argument("--transport", choices=TRANSPORTS, help="mark this transport's reads")
    show.add_argument("--seed", type=int, default=0)
    _corpus_option(show)
    validate = sub.add_parser("validate", help="check the corpus")
    _corpus_option(validate)
    manifest = sub.add_parser("manifest", help="rewrite corpus/manifest.json from the files")
    _corpus_option(manifest)
    quirks = sub.add_parser("quirks", help="print the providers × quirks tables")
    quirks.add_argument(
        "--write",
        action="store_true",
        help="write them into corpus/README.md between their markers",
    )
    _corpus_option(quirks)
    report = sub.add_parser("report", help="one HTML matrix of several adapters' results files")
    report.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULTS",
        help="results files written by 'run --json', one per adapter",
    )
    report.add_argument(
        "--output",
        "--out",
        type=Path,
        default=Path("streamproof-matrix.html"),
        metavar="FILE",
        help="where to write it (default: streamproof-matrix.html)",
    )
    _corpus_option(report)
    sub.add_parser("setup-node", help="install the Node runtime and libraries of the Node adapters")
    add_verify_arguments(sub.add_parser("verify", help="check a results file against its corpus"))
    add_diff_arguments(sub.add_parser("diff", help="what changed between two runs"))
    lint = sub.add_parser("lint", help="how far one response departs from the OpenAI reference")
    lint_command.add_arguments(lint)  # it brings its own --corpus
    providers = sub.add_parser("providers", help="lint every provider's cases into a report")
    providers.add_argument(
        "--output",
        type=Path,
        default=Path("reports/providers.html"),
        metavar="FILE",
        help="the HTML report; the JSON goes beside it",
    )
    _corpus_option(providers)
    srv = sub.add_parser("serve", help="replay the corpus over HTTP for real clients")
    serve.add_arguments(srv)  # it brings its own --corpus
    record = sub.add_parser("record", help="capture one live response as a case awaiting review")
    add_record_arguments(record)
    review = sub.add_parser("review", help="check a recorded case field by field, then accept it")
    add_review_arguments(review)
    return parser


def _corpus_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="corpus folder (default: the corpus shipped with streamproof)",
    )


def _transports(value: str) -> list[str]:
    try:
        return parse_transports(value)
    except ValueError as exc:
        raise UsageError(f"--transport: {exc}") from None


def _load(args: argparse.Namespace) -> Corpus:
    return load_corpus(args.corpus)


def cmd_run(args: argparse.Namespace) -> int:
    transports = _transports(args.transport)
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    default_report = args.adapter_given is False and args.html is None
    return execute_run(
        RunOptions(
            spec=args.adapter,
            transports=transports,
            cases=args.case,
            corpus=args.corpus,
            seed=args.seed,
            fail_on=args.fail_on,
            timeout=args.timeout,
            jobs=args.jobs,
            expect=args.expect,
            json=args.json,
            baseline=args.baseline,
            http=args.http,
            html=Path(DEFAULT_REPORT) if default_report else args.html,
            junit=args.junit,
            write_expect=args.write_expect,
        )
    )


def cmd_list(args: argparse.Namespace) -> int:
    corpus = _load(args)
    cases = [c for c in corpus.cases if not args.provider or c.provider in args.provider]
    if not cases:
        known = ", ".join(sorted({c.provider for c in corpus.cases}))
        raise UsageError(f"no case of provider {' '.join(args.provider)!r} (known: {known})")
    for case in cases:
        flag = "" if case.runnable else "  (recorded, not yet reviewed)"
        print(f"{case.id:<58} {case.severity:<6} {case.title}{flag}")
    providers = len({c.provider for c in cases})
    print(f"{len(cases)} cases of {providers} providers, corpus {corpus.version}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    corpus = _load(args)
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


def cmd_validate(args: argparse.Namespace) -> int:
    root = (args.corpus or default_root()).resolve()
    problems = check_corpus(root)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in {root}", file=sys.stderr)
        return 2
    corpus = load_corpus(root)
    for case in awaiting_review(corpus.cases):
        print(f"{case.id}: recorded, awaits review (streamproof review {case.id})")
    print(f"ok: {len(corpus.cases)} cases, corpus {corpus.version} (sha256 {corpus.sha256})")
    return 0


def cmd_manifest(args: argparse.Namespace) -> int:
    root = (args.corpus or default_root()).resolve()
    load_corpus(root)  # never digest a corpus that does not load
    manifest = write_manifest(root)
    print(
        f"wrote {root / 'manifest.json'}: {len(manifest['files'])} files, "
        f"sha256 {manifest['sha256']}"
    )
    return 0


def cmd_quirks(args: argparse.Namespace) -> int:
    corpus = _load(args)
    catalogue, problems = load_quirks(corpus.root)
    if catalogue is None or problems:
        for problem in problems:
            print(f"streamproof: {problem}", file=sys.stderr)
        return 2
    readme = corpus.root / "README.md"
    if args.write:
        text = readme.read_text(encoding="utf-8")
        try:
            fresh = readme_with_tables(text, catalogue, corpus.cases)
        except ValueError as exc:
            raise UsageError(f"{readme}: {exc}") from None
        readme.write_text(fresh, encoding="utf-8")
        print(f"wrote the quirk tables into {readme}")
    else:
        print(tables(catalogue, corpus.cases))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    corpus = _load(args)
    try:
        write_matrix(args.results, args.output, corpus)
    except MatrixError as exc:
        raise UsageError(str(exc)) from None
    print(f"matrix: {args.output} ({len(args.results)} results files, corpus {corpus.version})")
    return 0


def cmd_setup_node(args: argparse.Namespace) -> int:
    cache = nodejs.cache_dir()
    nodejs.install(cache)
    print(f"node adapters ready in {cache} (runtime {nodejs.node_binary(cache)})")
    return 0


def cmd_providers(args: argparse.Namespace) -> int:
    corpus = _load(args)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    json_path = args.output.with_suffix(".json")
    write_provider_report(corpus, args.output, json_path)
    print(f"provider report: {args.output} and {json_path}")
    return 0


_COMMANDS = {
    "run": cmd_run,
    "list": cmd_list,
    "show": cmd_show,
    "validate": cmd_validate,
    "manifest": cmd_manifest,
    "quirks": cmd_quirks,
    "report": cmd_report,
    "setup-node": cmd_setup_node,
    "verify": cmd_verify,
    "diff": cmd_diff,
    "serve": serve.main,
    "lint": lint_command.main,
    "providers": cmd_providers,
    "record": record_main,
    "review": review_main,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        args.adapter_given = args.adapter is not None
        args.adapter = args.adapter or "reference"
    try:
        return _COMMANDS[args.command](args)
    except CorpusError as exc:
        for problem in exc.problems:
            print(f"streamproof: {problem}", file=sys.stderr)
    except (AdapterError, UsageError, RunError) as exc:
        print(f"streamproof: {exc}", file=sys.stderr)
    except OSError as exc:
        print(f"streamproof: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
