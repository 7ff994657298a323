"""The cost columns of the matrix: each adapter's scaling verdicts and throughput.

``streamproof scaling --json`` (the nightly writes ``reports/scaling.json``)
gives, per adapter, a verdict for each dimension that grows (one event's
size, the number of events, of tool-call fragments, of reads) and the
throughput on a standard stream. A verdict family apart from correctness:
the matrix shows it in a table of its own, never in a case's cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..harness.strict_json import read_document

__all__ = ["CostRow", "ScalingError", "cost_rows", "load_scaling"]

DIMENSIONS = ("event-size", "events", "tool-fragments", "reads")


class ScalingError(Exception):
    """The scaling file cannot be read (one line)."""


@dataclass(frozen=True)
class CostRow:
    """One line of the cost table: a dimension's verdicts, or a throughput figure."""

    name: str
    cells: list[str | None]  # one per adapter column; None: not measured
    bad: list[bool]  # a superlinear or timeout verdict


def load_scaling(path: Path) -> dict[str, Any]:
    """The adapters of a scaling file, by name."""
    try:
        document = read_document(path)
    except OSError as exc:
        raise ScalingError(f"{path}: not a scaling file: {exc.strerror or exc}") from None
    except ValueError as exc:  # (its line names the file already)
        reason = str(exc).removeprefix(f"{path}: ")
        raise ScalingError(f"{path}: not a scaling file: {reason}") from None
    adapters = document.get("adapters") if isinstance(document, dict) else None
    if not isinstance(adapters, dict):
        raise ScalingError(f"{path}: not a scaling file: no 'adapters' object")
    return adapters


def _verdict(figures: Any) -> tuple[str | None, bool]:
    if not isinstance(figures, dict) or "verdict" not in figures:
        return None, False
    verdict = str(figures["verdict"])
    exponent = figures.get("exponent")
    text = verdict if exponent is None else f"{verdict} (n^{exponent:.2f})"
    return text, verdict != "linear"


def cost_rows(adapters: dict[str, Any], names: Sequence[str]) -> list[CostRow]:
    """The rows of the cost table for the matrix's adapter columns, in their order."""
    rows = []
    for dimension in DIMENSIONS:
        cells, bad = [], []
        for name in names:
            entry = adapters.get(name) or {}
            text, wrong = _verdict((entry.get("dimensions") or {}).get(dimension))
            cells.append(text)
            bad.append(wrong)
        rows.append(CostRow(dimension, cells, bad))
    for key, label in (("mb_per_s", "throughput MB/s"), ("chunks_per_s", "chunks/s")):
        cells = []
        for name in names:
            value = ((adapters.get(name) or {}).get("throughput") or {}).get(key)
            cells.append(
                None if value is None else f"{value:,.1f}" if key == "mb_per_s" else f"{value:,.0f}"
            )
        rows.append(CostRow(label, cells, [False] * len(names)))
    return rows if any(c is not None for row in rows for c in row.cells) else []
