"""The engines of one run: started when the first case runs, stopped together.

``streamproof run`` (with or without pytest) and the pytest plugin score a
plan the same way: one ``Engine``, or with ``--jobs N`` an ``EnginePool`` of
N engines, each with its own adapter process, and with ``--http`` the replay
server they all fetch from. This module starts them, hands them out and stops
them, so the two ways of running share one lifecycle. Starting raises
``AdapterError`` (an adapter that does not load or answer) or ``OSError`` (a
trace file that cannot be opened); each caller says it in its own way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..corpus.cases import Case, Corpus
from ..harness.engine import Engine
from ..harness.expectations import Expectations
from ..harness.pool import EnginePool
from ..harness.protocol import AdapterProcess

__all__ = ["RunEngines"]


class RunEngines:
    """The engine (or pool of engines) and the replay server of one run."""

    def __init__(
        self,
        spec: str,
        corpus: Corpus,
        *,
        seed: int,
        seeds: Sequence[int],
        timeout: float | None,
        expectations: Expectations | None,
        http: bool = False,
        trace: str | Path | None = None,
        jobs: int = 1,
        process: AdapterProcess | None = None,
    ) -> None:
        """``process``: an adapter process already started for ``spec``, taken over
        by the first engine (``streamproof run``'s probe)."""
        self.spec = spec
        self.corpus = corpus
        self.seed = seed
        self.seeds = list(seeds)
        self.timeout = timeout
        self.expectations = expectations
        self.http = http
        self.trace = trace
        self.jobs = jobs
        self._process = process
        self.first: Engine | None = None  # (with --jobs, the pool's first)
        self._pool: EnginePool | None = None
        self._server: Any = None  # the replay server of --http

    def get(self, order: Sequence[tuple[Case, str]] = ()) -> Engine | EnginePool:
        """What runs the cases, started on the first call.

        ``order``: the runs in the order they will be asked for, which the pool
        of ``jobs`` > 1 starts ahead of time.
        """
        if self.first is None:
            process, self._process = self._process, None
            self.first = self._start(process)
            if self.jobs > 1:
                engines = [self.first]
                try:
                    while len(engines) < self.jobs:
                        engines.append(self._start(None))
                except BaseException:  # (one that cannot start ends the run)
                    for started in engines[1:]:
                        started.close()
                    raise
                self._pool = EnginePool(engines, order)
        return self._pool or self.first

    def _start(self, process: AdapterProcess | None) -> Engine:
        http = None
        if self.http:
            if self._server is None:
                from ..live.serve import ReplayServer  # its library loads only when asked

                self._server = ReplayServer(self.corpus, seed=self.seed)
                self._server.start()
            http = self._server.case_base_url
        return Engine(
            self.spec,
            seed=self.seed,
            seeds=self.seeds,
            timeout=self.timeout,
            expectations=self.expectations,
            http=http,
            trace=self.trace,
            process=process,
        )

    def stop(self) -> list[str]:
        """End every adapter process and the server; the adapters' faults between
        cases (charged to no case), one line each. Stopping twice does nothing."""
        pool, self._pool = self._pool, None
        first, self.first = self.first, None
        engines = pool.engines if pool is not None else [first] if first is not None else []
        if pool is not None:
            pool.close()
        faults = []
        for each in engines:
            each.close()  # (a second close of a pool's engine does nothing)
            faults.extend(each.process.faults)
        if self._process is not None:  # handed over, never taken
            self._process.close()
            self._process = None
        if self._server is not None:
            self._server.stop()
            self._server = None
        return faults
