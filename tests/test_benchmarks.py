"""The benchmark scripts still run and still check their data (not timed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize(
    "script", ["bench_parsers.py", "bench_runs.py", "bench_protocol.py", "bench_startup.py"]
)
def test_benchmark_runs_quick(script: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MISMATCH" not in proc.stdout
