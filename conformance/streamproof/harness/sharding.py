"""One shard of a run's plan: ``run --shard K/N``.

A plan (every selected case × transport, in corpus and transport order) is
dealt into N shards so that each run of the plan is in exactly one of them.
The deal depends on the plan alone, never on the machine, the clock or the
process. A case goes whole to one shard, all its transports together: its
files are read and checked once per run of the plan, not once per shard (a
case's transports spread over the shards made every shard read nearly every
case, which cost a sharded run more CPU than the runs themselves). The cases
are taken in plan order, each to the shard holding the fewest runs so far
(the first of them on a tie), so the shards' sizes differ by at most one
case's runs, and each shard holds every transport of its cases, costly
``bytes`` runs included, in the same measure. A plan of fewer cases than
shards is dealt run by run instead, in turn, so that no shard is left empty.

``plan_digest`` names the whole plan, so that ``merge`` can tell shards of one
plan from shards of two.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["MAX_SHARDS", "Shard", "plan_digest"]

#: The most shards one plan is dealt into (a CI matrix of 256 jobs is GitHub's own bound).
MAX_SHARDS = 256

_SHARD = re.compile(r"^\s*(\d{1,4})\s*/\s*(\d{1,4})\s*$")

_Run = TypeVar("_Run", bound=tuple[Any, str])


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``'2/4'`` → ``Shard(2, 4)``; ``ValueError`` saying what is wrong."""
        match = _SHARD.match(text)
        if match is None:
            raise ValueError(f"{text!r} is not K/N (shard K of N, e.g. 2/4)")
        index, count = int(match[1]), int(match[2])
        if not 1 <= count <= MAX_SHARDS:
            raise ValueError(f"{text!r}: N must be from 1 to {MAX_SHARDS}")
        if not 1 <= index <= count:
            raise ValueError(f"{text!r}: K must be from 1 to N ({count})")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def take(self, plan: Sequence[_Run]) -> list[_Run]:
        """This shard's runs of ``plan``, in plan order."""
        if self.count == 1:
            return list(plan)
        runs: dict[str, int] = {}  # case id -> its runs, in plan order
        for case, _ in plan:
            runs[case.id] = runs.get(case.id, 0) + 1
        if len(runs) < self.count:
            return [run for i, run in enumerate(plan) if i % self.count == self.index - 1]
        sizes = [0] * self.count
        owner: dict[str, int] = {}
        for case_id, count in runs.items():
            least = sizes.index(min(sizes))
            owner[case_id] = least
            sizes[least] += count
        return [run for run in plan if owner[run[0].id] == self.index - 1]


def plan_digest(plan: Sequence[tuple[Any, str]]) -> str:
    """sha256 of the plan: one ``case id<TAB>transport`` line per run, in plan order."""
    digest = hashlib.sha256()
    for case, transport in plan:
        digest.update(f"{case.id}\t{transport}\n".encode())
    return digest.hexdigest()
