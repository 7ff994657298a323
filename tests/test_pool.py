"""--jobs N: several adapter processes run the plan ahead of the session that reads it."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import CorpusError, load_corpus
from streamproof.harness.engine import Engine, Verdict
from streamproof.harness.pool import EnginePool

ADAPTERS = Path(__file__).parent / "adapters"
CASES = [c for c in load_corpus().cases if c.id.startswith("generic/")][:6]


class _Process:
    def __init__(self) -> None:
        self.interrupted = ""

    def interrupt(self, why: str) -> None:
        self.interrupted = why


class _Engine:
    """Stands in for an Engine: records what it ran, and when."""

    def __init__(self, log: list[tuple[str, str]], lock: threading.Lock, gate: Any = None) -> None:
        self.log, self.lock, self.gate = log, lock, gate
        self.process = _Process()
        self.capabilities = frozenset({"content"})
        self.closed = False

    def run(self, case: Any, transport: str) -> Any:
        with self.lock:
            self.log.append((case.id, transport))
        if self.gate is not None:
            self.gate.wait()
        if transport == "boom":
            raise CorpusError([f"{case.id}: changed"])
        return (case.id, transport)

    def close(self) -> None:
        self.closed = True


def _pool(engines: int, plan: list[tuple[Any, str]], **kw: Any) -> tuple[EnginePool, list[Any]]:
    log: list[tuple[str, str]] = []
    lock = threading.Lock()
    gate = kw.pop("gate", None)
    made = [_Engine(log, lock, gate) for _ in range(engines)]
    return EnginePool(made, plan, **kw), made  # type: ignore[arg-type]


def test_each_run_is_the_engines_result_in_the_order_asked() -> None:
    plan = [(case, t) for case in CASES for t in ("whole", "lines")]
    pool, _ = _pool(3, plan)
    try:
        assert [pool.run(c, t) for c, t in plan] == [(c.id, t) for c, t in plan]
    finally:
        pool.close()


def test_runs_start_in_plan_order_and_no_further_ahead_than_the_window() -> None:
    plan = [(case, "whole") for case in CASES]
    gate = threading.Event()
    pool, engines = _pool(2, plan, gate=gate, ahead=1)
    try:
        time.sleep(0.2)  # the engines take what the window allows, then wait
        assert engines[0].log == [(c.id, "whole") for c in CASES[:2]]
        gate.set()
        assert [pool.run(c, t) for c, t in plan] == [(c.id, "whole") for c in CASES]
        assert engines[0].log == [(c.id, "whole") for c in CASES]
    finally:
        pool.close()


def test_a_run_passed_over_or_outside_the_plan_is_run_when_asked() -> None:
    plan = [(case, "whole") for case in CASES]
    pool, _ = _pool(2, plan)
    try:
        assert pool.run(CASES[4], "whole") == (CASES[4].id, "whole")
        assert pool.run(CASES[1], "whole") == (CASES[1].id, "whole")
        assert pool.run(CASES[0], "bytes") == (CASES[0].id, "bytes")  # not in the plan
    finally:
        pool.close()


def test_a_run_asked_for_again_runs_again() -> None:
    # (pytest-rerunfailures, for one, runs an item a second time)
    plan = [(case, "whole") for case in CASES[:3]]
    pool, engines = _pool(2, plan)
    try:
        assert pool.run(*plan[0]) == pool.run(*plan[0]) == (CASES[0].id, "whole")
        assert engines[0].log.count((CASES[0].id, "whole")) == 2
        assert [pool.run(c, t) for c, t in plan[1:]] == [(c.id, "whole") for c in CASES[1:3]]
    finally:
        pool.close()


def test_what_a_run_raises_is_raised_where_it_is_asked_for() -> None:
    plan = [(CASES[0], "whole"), (CASES[1], "boom"), (CASES[2], "whole")]
    pool, _ = _pool(2, plan)
    try:
        assert pool.run(*plan[0]) == (CASES[0].id, "whole")
        with pytest.raises(CorpusError, match="changed"):
            pool.run(*plan[1])
        assert pool.run(*plan[2]) == (CASES[2].id, "whole")
    finally:
        pool.close()


def test_closing_interrupts_a_run_under_way_and_closes_every_engine() -> None:
    gate = threading.Event()
    pool, engines = _pool(2, [(case, "whole") for case in CASES], gate=gate)
    time.sleep(0.2)
    started = time.monotonic()
    closer = threading.Thread(target=pool.close)
    closer.start()
    time.sleep(0.1)
    assert all(e.process.interrupted == "the run ended" for e in engines)
    gate.set()  # (a real adapter process dies of the interrupt; this one is let go)
    closer.join(timeout=10)
    assert time.monotonic() - started < 5 and all(e.closed for e in engines)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_hung_adapter_under_way_at_close_leaves_no_process() -> None:
    # Real engines on an adapter that never returns: the session stops (as
    # after -x) while both engines wait on a reply; nothing outlives the pool.
    engines = [Engine(str(ADAPTERS / "hangs.py"), timeout=60) for _ in range(2)]
    pool = EnginePool(engines, [(case, "whole") for case in CASES])
    time.sleep(0.5)
    pids = [e.process._proc.pid for e in engines if e.process._proc is not None]
    assert len(pids) == 2
    started = time.monotonic()
    pool.close()
    assert time.monotonic() - started < 10
    time.sleep(0.2)
    assert not any(_alive(pid) for pid in pids)
    assert all(e.process._proc is None for e in engines)


def test_jobs_and_one_process_give_the_same_results(tmp_path: Path) -> None:
    plan = [(case, t) for case in CASES for t in ("whole", "bytes", "random")]
    one = Engine("reference", seed=3)
    pool = EnginePool([Engine("reference", seed=3) for _ in range(2)], plan)
    try:
        alone = [one.run(c, t) for c, t in plan]
        pooled = [pool.run(c, t) for c, t in plan]
    finally:
        one.close()
        pool.close()
    assert all(r.verdict is Verdict.PASS for r in alone)

    def shown(r: Any) -> Any:
        return {k: v for k, v in r.as_dict().items() if k != "seconds"}

    assert [shown(r) for r in pooled] == [shown(r) for r in alone]
