"""The errors that end a command with one line and exit status 2.

They live apart from the code that raises them so that the command line can
catch them without importing that code: ``streamproof --help`` stays cheap.
Standard library only; every layer may import this module.
"""

from __future__ import annotations

__all__ = ["AdapterError", "CommandError", "CorpusError", "UsageError"]


class CommandError(Exception):
    """A command cannot go on: one line on stderr, exit 2."""


class UsageError(CommandError):
    """A mistake in the command line."""


class AdapterError(CommandError):
    """The adapter SPEC cannot be loaded or started."""


class CorpusError(CommandError):
    """The corpus cannot be used; ``problems`` holds one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems[0] if len(problems) == 1 else f"{len(problems)} problems")
        self.problems = problems
