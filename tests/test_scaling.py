"""Cost verdicts: the fit, the families and ``streamproof scaling``.

The adapters under test spend their time in deterministic sleeps
proportional to n and to n², so the verdicts do not depend on machine load.
Quick smoke sizes only; the nightly runs the full families.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamproof.fuzz import families
from streamproof.fuzz.scaling import SUPERLINEAR_EXPONENT, Point, exponent, verdict

ADAPTERS = Path(__file__).parent / "adapters"


def _scaling(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof", "scaling", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def _points(seconds: list[float | None], sizes: tuple[int, ...] = (1, 2, 4, 8)) -> list[Point]:
    return [
        Point(n, s, "" if s is not None else "timeout after 1 s")
        for n, s in zip(sizes, seconds, strict=False)
    ]


def test_the_fit_reads_ratios_not_absolute_times() -> None:
    linear = _points([0.1, 0.2, 0.4, 0.8])
    slow_linear = _points([10.0, 20.0, 40.0, 80.0])
    quadratic = _points([0.01, 0.04, 0.16, 0.64])
    assert exponent(linear) == pytest.approx(1.0)
    assert verdict(linear) == verdict(slow_linear) == "linear"
    assert exponent(quadratic) == pytest.approx(2.0)
    assert verdict(quadratic) == "superlinear"
    # Fixed costs flatten the smallest sizes; the largest ones decide.
    with_overhead = _points(
        [0.05, 0.05, 0.05, 0.06, 0.2, 0.8, 3.2, 12.8], tuple(2**i for i in range(8))
    )
    assert exponent(with_overhead) > SUPERLINEAR_EXPONENT
    assert verdict(_points([0.1, 0.2, None])) == "timeout"


def test_each_family_grows_in_its_own_dimension_only() -> None:
    small, large = families.event_size(64 * 1024), families.event_size(128 * 1024)
    assert small.events == large.events == 3
    assert len(large.body) - len(small.body) == 64 * 1024
    assert families.events(2048).events == 2 * families.events(1024).events - 2
    fragments = families.tool_fragments(1000)
    assert fragments.body.count(b'\\"k\\":1,') == 1000
    reads = families.reads(4096)
    assert reads.ends == list(range(1, len(reads.body) + 1))
    assert 3000 < len(reads.body) <= 4096 + 200
    assert all(
        e - s <= families.READ_SIZE for s, e in zip([0, *small.ends], small.ends, strict=False)
    )


@pytest.mark.parametrize(
    ("adapter", "want"), [("sleeps_linear.py", "linear"), ("sleeps_quadratic.py", "superlinear")]
)
def test_sleeping_adapters_get_their_verdict(adapter: str, want: str, tmp_path: Path) -> None:
    out = tmp_path / "scaling.json"
    proc = _scaling(
        "--adapter",
        ADAPTERS / adapter,
        "--dimension",
        "events",
        "--sizes",
        "400,800,1600",
        "--repeat",
        "1",
        "--no-throughput",
        "--json",
        out,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (entry,) = json.loads(out.read_text())["adapters"].values()
    found = entry["dimensions"]["events"]
    assert found["verdict"] == want, found
    assert f"events          {want}" in proc.stdout
    if want == "superlinear":
        assert found["exponent"] >= 1.5  # n² fits near 2
    else:
        assert 0.8 <= found["exponent"] < SUPERLINEAR_EXPONENT


def test_a_hang_is_a_timeout_verdict_and_throughput_is_merged(tmp_path: Path) -> None:
    results = tmp_path / "scaling.json"
    quick = ["--dimension", "events", "--sizes", "100,200", "--repeat", "1", "--merge", results]
    ref = _scaling(*quick, cwd=tmp_path)
    assert ref.returncode == 0, ref.stderr
    hang = _scaling(
        "--adapter",
        ADAPTERS / "hangs.py",
        *quick,
        "--timeout",
        "0.5",
        "--no-throughput",
        cwd=tmp_path,
    )
    assert hang.returncode == 0, hang.stderr
    other = _scaling("--adapter", ADAPTERS / "content_only.py", *quick, cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    adapters = json.loads(results.read_text())["adapters"]
    assert sorted(adapters) == ["content_only", "hangs", "reference"]
    assert adapters["hangs"]["dimensions"]["events"]["verdict"] == "timeout"
    assert adapters["hangs"]["dimensions"]["events"]["sizes"] == [100]
    assert "throughput" not in adapters["hangs"]
    assert adapters["reference"]["throughput"]["mb_per_s"] > 0
    assert "x the reference's" in other.stdout and "x the reference's" not in ref.stdout


@pytest.mark.parametrize(
    "args",
    [["--dimension", "nope"], ["--sizes", "1,2"], ["--dimension", "events", "--sizes", "2,1"]],
)
def test_usage_errors_exit_2_with_one_line(args: list[str], tmp_path: Path) -> None:
    proc = _scaling(*args, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_merging_keeps_the_other_dimensions_figures() -> None:
    from streamproof.fuzz.scaling import merge

    old = {"a": {"version": "1", "dimensions": {"events": {"verdict": "linear"}}}}
    new = {"a": {"version": "2", "dimensions": {"reads": {"verdict": "superlinear"}}}}
    merged = merge(old, new)
    assert merged["a"]["version"] == "2"
    assert merged["a"]["dimensions"] == {
        "events": {"verdict": "linear"},
        "reads": {"verdict": "superlinear"},
    }
