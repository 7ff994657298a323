"""What a run is asked to do, and what its results record of the plan.

Kept apart from ``pytest_session`` so that a run that needs no pytest
(``cli.direct``) never imports it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..harness.selection import split_values
from ..harness.sharding import Shard

__all__ = ["RunInterrupted", "RunOptions", "plan_record"]


@dataclass
class RunOptions:
    """Everything a run is asked to do (the ``run`` command's options)."""

    spec: str
    transports: list[str]
    seed: int | None  # None: draw one
    fail_on: str
    seeds: list[int] = field(default_factory=list)  # two or more: random runs under each
    cases: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    keyword: str = ""
    exitfirst: bool = False
    verbosity: int = 0
    corpus: Path | None = None
    expect: Path | None = None
    timeout: float | None = None
    jobs: int = 1
    html: Path | None = None
    junit: Path | None = None
    json: Path | None = None
    baseline: Path | None = None
    http: bool = False
    write_expect: Path | None = None
    trace: Path | None = None
    shard: Shard | None = None  # None: the whole plan
    plan_sha256: str = ""  # of the whole plan, whichever shard of it runs (set by the run)


def plan_record(options: RunOptions) -> dict[str, Any]:
    """What the results' ``run`` records of the plan: ``options``, what shapes the plan
    and the verdicts besides transports and seed (the selection, the timeout, the known
    failures by digest), and for ``--shard`` its ``shard`` (schemas/results.schema.json)."""
    expect = None
    if options.expect is not None:  # (read and checked already by the run)
        expect = hashlib.sha256(options.expect.read_bytes()).hexdigest()
    record: dict[str, Any] = {
        "options": {
            "cases": split_values(options.cases),
            "providers": sorted(set(split_values(options.providers))),
            "keyword": options.keyword,
            "timeout": options.timeout,
            "expect_sha256": expect,
        }
    }
    if options.shard is not None:
        shard = options.shard
        record["shard"] = {"index": shard.index, "count": shard.count}
        record["shard"]["plan_sha256"] = options.plan_sha256
    return record


class RunInterrupted(Exception):
    """The run was interrupted (Ctrl-C, or SIGTERM turned into one) before it finished."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"interrupted after {done} of {total} case runs")
        self.done = done
        self.total = total
