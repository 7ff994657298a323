"""What ``streamproof run`` prints on a terminal."""

from __future__ import annotations

from typing import TextIO

from ..harness.engine import Result, Verdict
from .coverage import coverage_line
from .groups import group_lines, profile_lines
from .results import coverage_of, groups_of, summarize
from .wire import terminal_safe

__all__ = ["Progress", "print_summary"]

_SHOWN = (Verdict.FAIL, Verdict.CRASH, Verdict.TIMEOUT, Verdict.XPASS)


class Progress:
    """A one-line counter on a terminal; silent when output is not a terminal."""

    def __init__(self, total: int, stream: TextIO, *, every: bool = False) -> None:
        self._every = every  # a line per case run (-v), whether a terminal or not
        self._total = total
        self._count = 0
        self._bad = 0
        self._stream = stream
        self._live = stream.isatty()

    def step(self, result: Result) -> None:
        self._count += 1
        self._bad += result.verdict in _SHOWN
        if self._every:
            self._stream.write(
                f"{result.verdict.value.upper():<7} {result.case.id} [{result.transport}]\n"
            )
        elif self._live and (self._count % 25 == 0 or self._count == self._total):
            self._stream.write(f"\r{self._count}/{self._total} run, {self._bad} failing")
            self._stream.flush()

    def done(self) -> None:
        if self._live:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


def print_summary(
    results: list[Result],
    adapter: str,
    corpus: str,
    stream: TextIO,
    *,
    details: bool = True,
    in_process: bool = True,
) -> None:
    """Each failing case × transport with its first divergence (unless not ``details``,
    for ``-q``), one line, then coverage.

    The coverage lines (one per severity that ran) say how much was scored:
    a skip is not a pass, and a run that skipped most of its ``must`` cases
    must not read like one that passed them. Then, per field group, how many
    cases stated it, were compared and were right, and each profile's figure
    (docs/semantics.md §12.6).
    """
    for result, alike in _shown_once(results) if details else ():
        line = (
            f"{result.verdict.value.upper():<7} {result.case.id} "
            f"[{result.transport}] ({result.case.severity}): "
            f"{result.first_divergence}"
        )
        if alike:
            line += f" (the same under {', '.join(alike)})"
        stream.write(terminal_safe(line) + "\n")
        for extra in _details(result):
            stream.write(terminal_safe(extra) + "\n")
    s = summarize(results)
    parts = [f"{s['passed']} passed", f"{s['failed']} failed"]
    parts += [
        f"{s[k]} {k.replace('_', ' ')}"
        for k in ("skipped", "crashed", "timed_out", "xfailed", "xpassed")
        if s[k]
    ]
    # The counts are case runs (a case under one transport), not cases: say so.
    runs = f"{s['total']} case run" + ("" if s["total"] == 1 else "s")
    cases = len({r.case.id for r in results})
    of = f"of {runs} ({cases} case{'' if cases == 1 else 's'})"
    line = f"streamproof {adapter} on corpus {corpus}: {', '.join(parts)} {of}"
    stream.write(terminal_safe(line) + "\n")
    by_severity = coverage_of(results)["by_severity"]
    for severity, figures in by_severity.items():
        if figures["runs"]:
            stream.write(f"  {coverage_line(severity, figures)}\n")
    if s.get("incremental_checked"):
        stream.write(f"  incremental delivery checked on {s['incremental_checked']} case runs\n")
    figures = groups_of(results, in_process=in_process)
    lines = group_lines(figures["groups"])
    if lines:
        stream.write("  by field group:\n")
        stream.writelines(f"    {line}\n" for line in lines)
    if any(r.verdict is not Verdict.SKIP for r in results):
        stream.writelines(f"  {line}\n" for line in profile_lines(figures["profiles"]))


def _shown_once(results: list[Result]) -> list[tuple[Result, list[str]]]:
    """The results to show, each with the other transports it stands for: a case
    whose every run is shown with the same verdict, divergence and details is one
    line (its first transport's), else each shown run is its own line."""
    runs: dict[str, list[Result]] = {}
    for result in results:
        runs.setdefault(result.case.id, []).append(result)
    shown: list[tuple[Result, list[str]]] = []
    for case_runs in runs.values():
        bad = [r for r in case_runs if r.verdict in _SHOWN]
        first = bad[0] if bad else None
        if (
            first is not None
            and len(bad) == len(case_runs) > 1
            and all(_same(first, r) for r in bad[1:])
        ):
            shown.append((first, [r.transport for r in bad[1:]]))
        else:
            shown += [(r, []) for r in bad]
    return shown


def _same(one: Result, other: Result) -> bool:
    return (one.verdict, one.first_divergence, _details(one)) == (
        other.verdict,
        other.first_divergence,
        _details(other),
    )


#: A crash shows this many innermost lines of its traceback; a failure this many
#: last lines of what the adapter printed. The JSON and HTML keep them whole.
TRACEBACK_LINES = 6
OUTPUT_LINES = 5


def _details(result: Result) -> list[str]:
    """Where a crash was raised, the end of the adapter's traceback and of its
    printed output, indented.

    First the innermost frame outside the runtime's own library and
    streamproof: the parser's line that called ``json.loads``, not the line
    in ``json/decoder.py`` that raised.
    """
    lines: list[str] = []
    site = result.raised_in
    if site is not None:
        lines.append(f"  raised at {site}")
    if result.traceback:
        frames = result.traceback.splitlines()
    else:  # an adapter that sent frames alone
        frames = [str(frame) for frame in result.frames]
    if frames:
        cut = len(frames) > TRACEBACK_LINES
        lines += ["  traceback" + (" (innermost lines)" if cut else "") + ":"]
        lines += [f"    {line}" for line in frames[-TRACEBACK_LINES:]]
    if result.output.strip():
        printed = result.output.rstrip("\n").splitlines()
        cut = len(printed) > OUTPUT_LINES
        lines += ["  adapter printed" + (" (last lines)" if cut else "") + ":"]
        lines += [f"    {line}" for line in printed[-OUTPUT_LINES:]]
    return lines
