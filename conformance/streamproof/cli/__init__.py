"""The ``streamproof`` command: the application layer's front door.

Exit status: 0 success, 1 conformance failures, 2 usage or corpus error
(one line naming the file and the problem, never a traceback), 130 after
Ctrl-C (one line too: what was written by then stays, each file whole).

Each command lives in its own module of this package, with
``add_arguments(parser)`` and ``run(args) -> int``, and is imported only when
it runs: ``streamproof --help`` reads the table below and nothing else, so it
costs about what a bare interpreter does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from types import ModuleType

from ..__about__ import __version__
from ..errors import CommandError, CorpusError

__all__ = ["COMMANDS", "main"]

#: Every command: its module in this package and its one-line help.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "score an adapter against the corpus"),
    "list": ("list_cases", "list the cases"),
    "show": ("show", "show one case's stream and expectation"),
    "debug": ("debug", "run one case through an adapter in this process, under pdb if asked"),
    "check-adapter": ("check_adapter", "check that an adapter speaks the protocol, case by case"),
    "validate": ("validate", "check the corpus"),
    "manifest": ("manifest", "rewrite corpus/manifest.json from the files"),
    "quirks": ("quirks", "print the providers × quirks tables"),
    "report": ("report", "one HTML matrix of several adapters' results files"),
    "setup-node": ("setup_node", "install the Node runtime and libraries of the Node adapters"),
    "merge": ("merge", "join the results of 'run --shard K/N' into one run's"),
    "verify": ("verify", "check a results file against its corpus"),
    "diff": ("diff", "what changed between two runs"),
    "lint": ("lint", "how far one response departs from the OpenAI reference"),
    "providers": ("providers", "lint every provider's cases into a report"),
    "serve": ("serve", "replay the corpus over HTTP for real clients"),
    "record": ("record", "capture one live response as a case awaiting review"),
    "review": ("review", "check a recorded case field by field, then accept it"),
    "fuzz": ("fuzz", "draw responses from a model, judge an adapter, shrink a disagreement"),
    "scaling": ("scaling", "how an adapter's cost grows with event size, events and reads"),
}


def _top_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamproof",
        description="Conformance suite for parsers of OpenAI-compatible chat responses.",
    )
    parser.add_argument("--version", action="version", version=f"streamproof {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, text) in COMMANDS.items():
        # A placeholder: the command's own parser, in its module, reads the rest.
        sub.add_parser(name, help=text, add_help=False)
    return parser


def command_parser(name: str) -> tuple[argparse.ArgumentParser, ModuleType]:
    """The full parser of command ``name`` and its module (imported now)."""
    module_name, text = COMMANDS[name]
    module = importlib.import_module(f"{__name__}.{module_name}")
    parser = argparse.ArgumentParser(prog=f"streamproof {name}", description=f"{text}.")
    module.add_arguments(parser)
    return parser, module


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    known, rest = _top_parser().parse_known_args(arguments)
    parser, module = command_parser(known.command)
    args = parser.parse_args(rest)
    try:
        code = int(module.run(args))
        sys.stdout.flush()  # here, where a closed pipe can still be caught
        return code
    except BrokenPipeError:
        return _closed_pipe()
    except KeyboardInterrupt:  # (run says how far it got itself)
        _error("interrupted; nothing more was written")
        return 128 + signal.SIGINT
    except CorpusError as exc:
        for problem in exc.problems:
            _error(problem)
    except CommandError as exc:
        _error(str(exc))
    except OSError as exc:
        _error(f"{exc.filename or ''}: {exc.strerror or exc}")
    return 2


def _closed_pipe() -> int:
    """The reader went away (``streamproof list | head``): end quietly, as ``cat`` does.

    Nothing more can be written, and Python would complain when it flushes
    stdout at exit, so stdout is pointed at /dev/null first. 141 is what a
    shell reports for a process killed by SIGPIPE.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


def _error(line: str) -> None:
    """One line on stderr; its text may come from a corpus or an adapter."""
    from ..reporting.wire import terminal_safe  # standard library only, so cheap

    print(f"streamproof: {terminal_safe(line)}", file=sys.stderr)
