"""Several adapter processes running one plan ahead of the session that reads it.

``streamproof run --jobs N`` (and ``--streamproof-jobs N``) scores the plan in
one pytest session with one corpus, as ``--jobs 1`` does, and hands the case
runs to N engines, each with its own adapter process, in N threads. The
session asks for each run's result in its own order (``EnginePool.run``); the
threads start runs in that order, at most ``ahead`` runs past the last one
asked for, so the adapters work while the session judges and reports, and
results wait in memory only for that window.

An engine's run is the same call with or without a pool (``Engine.run``), so
a verdict never depends on ``--jobs``: the results are those of ``--jobs 1``
but for the time each run took. A run asked for that is not in the plan is
run when asked, by the next free engine.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ..corpus.cases import Case
from .engine import Engine
from .verdicts import Result

__all__ = ["EnginePool"]

# How long the session waits between two looks at its run (a wait that
# cannot be interrupted would keep Ctrl-C from stopping the run).
_WAIT = 0.25


class EnginePool:
    """N engines running ``plan`` in N threads, ahead of ``run``."""

    def __init__(
        self, engines: Sequence[Engine], plan: Sequence[tuple[Case, str]], ahead: int = 0
    ) -> None:
        if not engines:
            raise ValueError("a pool needs at least one engine")
        self.engines = list(engines)
        self._plan = list(plan)
        self._planned = len(self._plan)  # the runs of the plan; later ones were asked for
        self._index = {(case.id, transport): i for i, (case, transport) in enumerate(plan)}
        self._ahead = ahead or 2 * len(self.engines)
        self._cv = threading.Condition()
        self._next = 0  # the first run of the plan not yet started nor passed over
        self._asked = 0  # the run the session asked for last
        self._urgent: list[int] = []  # runs asked for that no thread will reach in order
        self._started: set[int] = set()
        self._answered: set[int] = set()  # runs whose result the session took
        self._done: dict[int, Result | BaseException] = {}
        self._closed = False
        self._busy: set[int] = set()  # the engines running a case now
        self._threads = [
            threading.Thread(target=self._work, args=(n,), daemon=True, name=f"engine-{n}")
            for n in range(len(self.engines))
        ]
        for thread in self._threads:
            thread.start()

    @property
    def capabilities(self) -> frozenset[str]:
        return self.engines[0].capabilities

    def run(self, case: Case, transport: str) -> Result:
        """What ``Engine.run(case, transport)`` returns (and raises)."""
        with self._cv:
            i = self._index.get((case.id, transport))
            if i is None:  # not in the plan
                self._plan.append((case, transport))
                i = self._index[(case.id, transport)] = len(self._plan) - 1
                self._urgent.append(i)
            elif i in self._answered or (i < self._next and i not in self._started):
                # asked for again (a rerun), or passed over earlier: run it now
                self._answered.discard(i)
                self._started.discard(i)
                self._urgent.append(i)
            if i < self._planned:
                self._asked = i
                self._next = max(self._next, i)  # the runs passed over wait until asked for
            self._cv.notify_all()
            while i not in self._done:
                if self._closed:
                    raise RuntimeError("the engine pool was closed")
                self._cv.wait(_WAIT)
            done = self._done.pop(i)
            self._answered.add(i)
        if isinstance(done, BaseException):
            raise done
        return done

    def close(self) -> None:
        """Start no more runs; end the adapter processes, and the threads with them.

        A run under way (past a stop at the first failure, or an interrupt) is
        not waited for: its process is killed (``AdapterProcess.interrupt``),
        its thread ends, and the run's result, which nobody asked for, is
        dropped. An idle process is stopped as ``Engine.close`` stops one.
        """
        with self._cv:
            self._closed = True
            busy = [self.engines[n] for n in self._busy]
            self._cv.notify_all()
        for engine in busy:
            engine.process.interrupt("the run ended")
        for thread in self._threads:
            thread.join(timeout=5)
        for engine in self.engines:
            engine.close()

    def _work(self, n: int) -> None:
        engine = self.engines[n]
        while True:
            with self._cv:
                i = self._take()
                while i is None and not self._closed:
                    self._cv.wait()
                    i = self._take()
                if i is None:
                    return
                self._started.add(i)
                self._busy.add(n)
            case, transport = self._plan[i]
            try:
                done: Result | BaseException = engine.run(case, transport)
            except BaseException as exc:  # raised in the session, where it asks for the run
                done = exc
            with self._cv:
                self._busy.discard(n)
                self._done[i] = done
                self._cv.notify_all()

    def _take(self) -> int | None:
        """The run a free engine starts now, if any (called holding the lock)."""
        if self._closed:
            return None
        if self._urgent:
            return self._urgent.pop(0)
        if self._next < self._planned and self._next <= self._asked + self._ahead:
            self._next += 1
            return self._next - 1
        return None
