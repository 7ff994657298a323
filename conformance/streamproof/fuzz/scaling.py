"""Cost verdicts: how an adapter's time grows with one dimension of a stream.

A verdict family apart from correctness: it never makes a case fail. For
each family of ``families`` the adapter gets streams of growing size, its
time per size is measured (the best of ``repeat`` runs, timed around the
``run`` exchange with the adapter's process by ``timing.TimedAdapter``),
and the growth is fitted on a log-log scale over the largest sizes. Ratios
between sizes decide, never absolute times, so a slow machine does not
change a verdict:

- ``linear``: the fitted exponent is below ``SUPERLINEAR_EXPONENT``;
- ``superlinear``: at or above it (the exponent is reported);
- ``timeout``: a size did not finish within the timeout.

Why 1.3 (docs/fuzzing.md has the long form): a parser linear in ``n``
fits near 1.0, and n·log n over a 8× range of sizes in the megabytes near
1.07; a quadratic one fits near 2.0, and one whose quadratic part is only a
third of its time at the largest size still fits above 1.35. Timing noise of
±20 % on one point moves the exponent over an 8× range by about ±0.09.
1.3 sits between the two with that margin on both sides.
"""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..__about__ import __version__
from ..harness.messages import run_message
from .families import FAMILIES, STANDARD, Family, Stream, standard_stream
from .timing import TimedAdapter

__all__ = [
    "SUPERLINEAR_EXPONENT",
    "Dimension",
    "Point",
    "document",
    "exponent",
    "measure",
    "scale",
    "throughput",
    "verdict",
]

SUPERLINEAR_EXPONENT = 1.3
#: The exponent is fitted over this many of the largest sizes, where fixed costs matter least.
FIT_POINTS = 4


@dataclass(frozen=True)
class Point:
    size: int
    seconds: float | None  # None: timed out
    message: str = ""


@dataclass
class Dimension:
    name: str
    unit: str
    points: list[Point] = field(default_factory=list)

    @property
    def exponent(self) -> float | None:
        return exponent([p for p in self.points if p.seconds is not None])

    @property
    def verdict(self) -> str:
        return verdict(self.points)

    def as_dict(self) -> dict[str, Any]:
        found = self.exponent
        data: dict[str, Any] = {
            "verdict": self.verdict,
            "exponent": None if found is None else round(found, 3),
            "unit": self.unit,
            "sizes": [p.size for p in self.points],
            "seconds": [None if p.seconds is None else round(p.seconds, 6) for p in self.points],
        }
        problems = [f"{p.size}: {p.message}" for p in self.points if p.message]
        if problems:
            data["problems"] = problems
        return data


def exponent(points: list[Point]) -> float | None:
    """The least-squares slope of log(seconds) over log(size), largest sizes only."""
    usable = [p for p in points if p.seconds is not None and p.seconds > 0][-FIT_POINTS:]
    if len(usable) < 2:
        return None
    xs = [math.log(p.size) for p in usable]
    ys = [math.log(p.seconds) for p in usable if p.seconds is not None]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread


def verdict(points: list[Point]) -> str:
    if any(p.seconds is None and not p.message.startswith("crash") for p in points):
        return "timeout"
    if any(p.message.startswith("crash") for p in points):
        return "crash"
    found = exponent(points)
    if found is None:
        return "unknown"
    return "superlinear" if found >= SUPERLINEAR_EXPONENT else "linear"


def measure(
    process: TimedAdapter, stream: Stream, *, repeat: int, timeout: float, label: str
) -> Point:
    """The best time of ``repeat`` runs of ``stream``; a timeout or crash ends the point."""
    message = run_message(
        f"scaling/{label}",
        "scaling",
        200,
        stream.headers,
        stream.request,
        stream.body,
        stream.ends,
    )
    best: float | None = None
    for _ in range(repeat):
        kind, seconds, detail = process.run(message, timeout)
        if kind == "timeout":
            return Point(0, None, f"timeout after {timeout:g} s")
        if kind != "outcome":
            return Point(0, None, f"crash: {detail}")
        best = seconds if best is None else min(best, seconds)
    return Point(0, best)


def scale(
    process: TimedAdapter,
    families: list[Family],
    *,
    quick: bool = False,
    sizes: list[int] | None = None,
    repeat: int = 2,
    timeout: float = 60.0,
    on_point: Callable[[str, Point], None] | None = None,
) -> list[Dimension]:
    """Every family through the adapter, growing until the largest size or a timeout."""
    found = []
    for family in families:
        dimension = Dimension(family.name, family.unit)
        for size in sizes or (family.quick if quick else family.sizes):
            point = measure(
                process,
                family.make(size),
                repeat=repeat,
                timeout=timeout,
                label=f"{family.name}-{size}",
            )
            point = Point(size, point.seconds, point.message)
            dimension.points.append(point)
            if on_point is not None:
                on_point(family.name, point)
            if point.seconds is None:
                break  # larger sizes would only take longer
        found.append(dimension)
    return found


def throughput(process: TimedAdapter, *, repeat: int = 3, timeout: float = 60.0) -> dict[str, Any]:
    """MB/s and chunks/s on the standard stream (``families.STANDARD`` events)."""
    stream = standard_stream()
    point = measure(process, stream, repeat=repeat, timeout=timeout, label="standard")
    data: dict[str, Any] = {
        "stream": f"{STANDARD} content events, {len(stream.body)} bytes, 8 KiB reads",
        "seconds": None if point.seconds is None else round(point.seconds, 6),
    }
    if point.seconds:
        data["mb_per_s"] = round(len(stream.body) / point.seconds / 1e6, 2)
        data["chunks_per_s"] = round(stream.events / point.seconds)
    else:
        data["problem"] = point.message
    return data


def document(adapters: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The scaling results file (``reports/scaling.json``)."""
    return {
        "tool": {"version": __version__},
        "run": {
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "platform": platform.platform(),
            "superlinear_exponent": SUPERLINEAR_EXPONENT,
            "fit_points": FIT_POINTS,
        },
        "adapters": adapters,
    }


def adapter_entry(
    process: TimedAdapter, dimensions: list[Dimension], speed: dict[str, Any] | None
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "version": process.version,
        "dimensions": {d.name: d.as_dict() for d in dimensions},
    }
    if speed is not None:
        data["throughput"] = speed
    return data


def merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Adapter entries of ``new`` over ``old``, dimension by dimension: a run of
    one dimension keeps the others' figures (each dimension lists its own sizes)."""
    merged = dict(old)
    for name, entry in new.items():
        before = old.get(name, {})
        dimensions = {**before.get("dimensions", {}), **entry["dimensions"]}
        merged[name] = {**before, **entry, "dimensions": dimensions}
    return merged


def families_named(names: list[str]) -> list[Family]:
    return [FAMILIES[n] for n in names] if names else list(FAMILIES.values())
