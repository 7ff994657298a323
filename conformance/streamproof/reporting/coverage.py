"""How much of a run was scored: case runs, scored and skipped, by severity, and why.

A skip is never a pass: a parser that lacks a capability is not scored on
the cases that need it. Every result (terminal, results JSON, HTML, badge)
says how much was scored, from the figures computed here. They are computed
from plain rows (severity, verdict, the capabilities the adapter lacks for
the case) so that ``verify`` recomputes them from a results file exactly as
the run computed them from its results.

A skipped run that lacks two capabilities counts under each of them in
``skipped_lacking``: the counts say how many runs each capability would
unlock, and need not add up to the number skipped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..corpus.cases import SEVERITIES

__all__ = [
    "REAL_CONNECTION",
    "SKIP_PREFIX",
    "coverage",
    "coverage_line",
    "lacking_from_message",
    "nothing_scored",
]

# The engine's skip message: "adapter lacks http_error, tool_calls".
SKIP_PREFIX = "adapter lacks "
# The engine's skip of a wire/ case in-process: "fault reset after byte 430
# exists only on a real connection; run --http scores it". Counted as lacking
# this one name, so the coverage line says why those runs were skipped.
REAL_CONNECTION = "real-connection"
_FAULT_SKIP = "exists only on a real connection"

Row = tuple[str, str, Iterable[str]]  # severity, verdict, capabilities lacked


def lacking_from_message(verdict: str, message: str) -> list[str]:
    """The capabilities a skipped run lacked, read from the engine's skip message."""
    if verdict == "skip" and message.startswith("fault ") and _FAULT_SKIP in message:
        return [REAL_CONNECTION]
    if verdict != "skip" or not message.startswith(SKIP_PREFIX):
        return []
    return [name.strip() for name in message[len(SKIP_PREFIX) :].split(",") if name.strip()]


def _ranked(counts: Counter[str]) -> dict[str, int]:
    return {name: counts[name] for name in sorted(counts, key=lambda n: (-counts[n], n))}


def coverage(rows: Iterable[Row]) -> dict[str, Any]:
    """The coverage figures of a run: ``by_severity`` and ``skipped_lacking``.

    ``by_severity`` has every severity, each with its case ``runs``, how many
    were ``scored`` (not skipped), ``passed`` (verdict ``pass``) and
    ``skipped``, and its own ``skipped_lacking``; ``skipped_lacking`` counts
    the skipped runs of every severity by missing capability, most first.
    """
    figures = {s: Counter[str]() for s in SEVERITIES}
    lacking = {s: Counter[str]() for s in SEVERITIES}
    for severity, verdict, missing in rows:
        counts = figures[severity]
        counts["runs"] += 1
        if verdict == "skip":
            counts["skipped"] += 1
            lacking[severity].update(set(missing))
        else:
            counts["scored"] += 1
            counts["passed"] += verdict == "pass"
    overall = sum(lacking.values(), Counter[str]())
    return {
        "by_severity": {
            s: {
                **{k: figures[s][k] for k in ("runs", "scored", "passed", "skipped")},
                "skipped_lacking": _ranked(lacking[s]),
            }
            for s in SEVERITIES
        },
        "skipped_lacking": _ranked(overall),
    }


def coverage_line(severity: str, figures: Mapping[str, Any]) -> str:
    """``must 307 passed of 307 scored (1151 case runs; 844 skipped: http_error 192, …)``."""
    head = f"{severity} {figures['passed']} passed of {figures['scored']} scored"
    if not figures["skipped"]:
        return f"{head} ({_runs(figures['runs'])}, none skipped)"
    reasons = ", ".join(f"{name} {n}" for name, n in figures["skipped_lacking"].items())
    why = f": {reasons}" if reasons else ""
    return f"{head} ({_runs(figures['runs'])}; {figures['skipped']} skipped{why})"


def nothing_scored(figures: Mapping[str, Any], transports: Sequence[str] = ()) -> str | None:
    """Why a run with these coverage figures scored nothing, or ``None`` if it scored some."""
    runs = sum(f["runs"] for f in figures["by_severity"].values())
    if runs == 0:
        where = f" under --transport {','.join(transports)}" if transports else ""
        why = " (recorded runs only the cases that have a chunks.json)"
        return f"nothing was scored: no selected case runs{where}" + (
            why if "recorded" in transports else ""
        )
    if any(f["scored"] for f in figures["by_severity"].values()):
        return None
    reasons = ", ".join(f"{name} {n}" for name, n in figures["skipped_lacking"].items())
    hint = "; run --http scores faults on a real connection" if REAL_CONNECTION in reasons else ""
    return (
        f"nothing was scored: all {runs} case runs were skipped for capabilities "
        f"the adapter lacks ({reasons or 'none named'}){hint}"
    )


def _runs(count: int) -> str:
    return f"{count} case run" + ("" if count == 1 else "s")
