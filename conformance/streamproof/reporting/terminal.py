"""What ``streamproof run`` prints on a terminal."""

from __future__ import annotations

from typing import TextIO

from ..harness.engine import Result, Verdict
from .results import summarize
from .wire import terminal_safe

__all__ = ["Progress", "print_summary"]

_SHOWN = (Verdict.FAIL, Verdict.CRASH, Verdict.TIMEOUT, Verdict.XPASS)


class Progress:
    """A one-line counter on a terminal; silent when output is not a terminal."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self._total = total
        self._count = 0
        self._bad = 0
        self._stream = stream
        self._live = stream.isatty()

    def step(self, result: Result) -> None:
        self._count += 1
        self._bad += result.verdict in _SHOWN
        if self._live and (self._count % 25 == 0 or self._count == self._total):
            self._stream.write(f"\r{self._count}/{self._total} run, {self._bad} failing")
            self._stream.flush()

    def done(self) -> None:
        if self._live:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


def print_summary(results: list[Result], adapter: str, corpus: str, stream: TextIO) -> None:
    """Each failing case × transport with its first divergence, then one line."""
    for result in results:
        if result.verdict in _SHOWN:
            line = (
                f"{result.verdict.value.upper():<7} {result.case.id} "
                f"[{result.transport}] ({result.case.severity}): "
                f"{result.first_divergence}"
            )
            stream.write(terminal_safe(line) + "\n")
    s = summarize(results)
    parts = [f"{s['passed']} passed", f"{s['failed']} failed"]
    parts += [
        f"{s[k]} {k.replace('_', ' ')}"
        for k in ("skipped", "crashed", "timed_out", "xfailed", "xpassed")
        if s[k]
    ]
    line = f"streamproof {adapter} on corpus {corpus}: {', '.join(parts)} ({s['total']} case runs)"
    stream.write(terminal_safe(line) + "\n")
