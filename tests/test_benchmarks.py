"""The benchmark scripts still run and still check their data (not timed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _script(name: str, *args: str, timeout: float = 300) -> str:
    """Run ``benchmarks/NAME ARGS``; its output, once it has exited 0 with no mismatch."""
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MISMATCH" not in proc.stdout
    return proc.stdout


@pytest.mark.parametrize(
    "script",
    [
        "bench_parsers.py",
        "bench_runs.py",
        "bench_protocol.py",
        "bench_startup.py",
        "bench_harness.py",
        "bench_scale.py",
    ],  # bench_shards.py: test_the_shard_benchmark_splits_what_each_shard_pays_again
)
def test_benchmark_runs_quick(script: str) -> None:
    _script(script, "--quick")


def test_the_table_runs_every_script_and_writes_one_row_per_figure(tmp_path: Path) -> None:
    out = tmp_path / "table.md"
    _script("run_all.py", "--quick", "--out", str(out), timeout=600)
    rows = [line for line in out.read_text().splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| figure | goal | now | 7aeba43 |")
    assert len(rows) == 1 + 10  # the header and every figure of the goals
    harness = next(r for r in rows if r.startswith("| harness CPU per case run"))
    assert " ms |" in harness  # measured, not a failure
    shards = next(r for r in rows if r.startswith("| 4 shards"))
    assert "the floor" in shards


def test_the_shard_benchmark_splits_what_each_shard_pays_again(tmp_path: Path) -> None:
    out = tmp_path / "shards.json"
    said = _script("bench_shards.py", "--quick", "--json", str(out))
    assert "each shard beyond the first pays again" in said
    split = json.loads(out.read_text(encoding="utf-8"))["per_shard"]
    pieces = split["pieces"]
    assert set(pieces) == {
        "interpreter",
        "standard library",
        "run imports",
        "supervised worker",
        "one-case run",
    }
    assert all(value > 0 for value in pieces.values())
    assert split["floor"] == pieces["standard library"] + pieces["supervised worker"]
    assert split["own_imports"] == pieces["run imports"] - pieces["standard library"]


def test_a_failing_script_is_said_in_its_rows_and_the_others_stay(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import run_all
    finally:
        sys.path.remove(str(BENCHMARKS))
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nprint('boom')\nsys.exit(3)\n")
    failed = run_all.run_script(broken, [], {}, tmp_path, 60)
    assert failed.failure == "broken.py failed (exit 3): boom"
    fine = run_all.Ran("bench_protocol.py", {"ratio": 41.0})
    empty = run_all.Ran("bench_scale.py", {})
    text = run_all.table(
        [
            (failed, run_all.parser_rows(failed)),
            (fine, run_all.protocol_rows(fine)),
            (empty, run_all.scale_rows(empty)),
        ],
        "7aeba43",
    )
    lines = text.splitlines()
    assert sum("broken.py failed (exit 3): boom" in line for line in lines) == 3
    assert "| 41× |" in next(line for line in lines if "persistent worker" in line)
    assert all("not measured" in line for line in lines if "10× corpus" in line)
