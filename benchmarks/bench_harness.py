"""What the harness costs around the adapter, against a base revision, in one run.

For each side (this checkout, and with ``--base REV`` that revision extracted
by ``bench_startup``'s helper), ``streamproof run --adapter reference --seed 1``
with no HTML report runs as a subprocess and its CPU time (user + system of
it and of every process it waited for: the adapter worker, xdist workers) is
taken from ``getrusage``. The figures:

* ``harness CPU per case run``: (CPU of ``--transport all`` minus the
  adapter's CPU time) / case runs. The adapter's CPU time is measured by
  ``adapter_cpu.py`` with the same side's code: the reference adapter's
  ``run`` on the very case runs of the results, in one process, timed with
  ``time.process_time``. (The results' per-run ``seconds`` are wall time,
  pipe included; on a busy machine they exceed the CPU they stand for.);
* ``whole run CPU beyond start``: CPU of ``--transport whole`` minus the CPU
  of a bare ``python -c pass``;
* ``jobs 2 / jobs 1``: wall time of ``--transport all --jobs 2`` over
  ``--jobs 1`` (this checkout; and the base's, for comparison).

Each is the median of ``--repeat`` rounds; within a round every command takes
its turn. A run that does not exit 0 or scores no case prints MISMATCH and the
exit status is 1.

    python benchmarks/bench_harness.py [--base REV] [--repeat N] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_startup import ROOT, _extract  # the one way to get a base revision
from bytecode import use_compiled_bytecode


def _children() -> tuple[float, int]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


class Side:
    """One revision of the package: how to run it, and its run's arguments."""

    def __init__(self, name: str, pythonpath: Path, modern: bool, cache: Path) -> None:
        self.name = name
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = str(pythonpath)
        # Each side keeps its own schema-check cache, started empty then kept warm.
        self.env["STREAMPROOF_CACHE_DIR"] = str(cache)
        self.modern = modern  # --no-html and -q exist (the base writes no HTML unless asked)

    def run(self, extra: list[str], cases: list[str]) -> dict[str, Any]:
        """CPU, wall time, case runs and adapter seconds of one ``streamproof run``."""
        with tempfile.TemporaryDirectory(prefix="streamproof-bench-") as tmp:
            out = Path(tmp) / "results.json"
            argv = [sys.executable, "-m", "streamproof", "run", "--adapter", "reference"]
            argv += ["--seed", "1", "--json", str(out), *extra]
            for case in cases:
                argv += ["--case", case]
            if self.modern:
                argv += ["--no-html", "-q"]
            cpu_before, _ = _children()
            started = time.perf_counter()
            done = subprocess.run(
                argv, env=self.env, cwd=tmp, capture_output=True, text=True, check=False
            )
            wall = time.perf_counter() - started
            cpu = _children()[0] - cpu_before
            if done.returncode != 0 or not out.exists():
                tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
                raise Mismatch(f"{self.name}: {' '.join(extra)} exited {done.returncode}: {tail}")
            results = json.loads(out.read_text(encoding="utf-8"))["results"]
        if not results:
            raise Mismatch(f"{self.name}: {' '.join(extra)} scored no case run")
        pairs = [[r["case"], r["transport"]] for r in results]
        return {"cpu": cpu, "wall": wall, "runs": len(results), "pairs": pairs}

    def adapter_cpu(self, pairs: list[list[str]]) -> float:
        """The reference adapter's CPU on ``pairs``, with this side's code."""
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve().parent / "adapter_cpu.py")],
            input=json.dumps(pairs),
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise Mismatch(f"{self.name}: adapter_cpu.py failed: {done.stderr.strip()[-200:]}")
        return float(json.loads(done.stdout)["adapter_cpu"])


class Mismatch(Exception):
    pass


def _bare() -> float:
    before, _ = _children()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return _children()[0] - before


def measure(sides: list[Side], repeat: int, cases: list[str]) -> dict[str, Any]:
    tasks = {
        "all": ["--transport", "all"],
        "whole": ["--transport", "whole"],
        "all-jobs2": ["--transport", "all", "--jobs", "2"],
    }
    samples: dict[str, list[Any]] = {"bare": []}
    pairs: dict[str, list[list[str]]] = {}
    for side in sides:
        for task, extra in tasks.items():
            warm = side.run(extra, cases)  # warm: file cache, bytecode, the schema-check cache
            samples[f"{side.name}:{task}"] = []
            if task == "all":
                pairs[side.name] = warm["pairs"]
        samples[f"{side.name}:adapter"] = []
    for _ in range(repeat):
        samples["bare"].append(_bare())
        for side in sides:
            for task, extra in tasks.items():
                run = side.run(extra, cases)
                run.pop("pairs")
                samples[f"{side.name}:{task}"].append(run)
            samples[f"{side.name}:adapter"].append(side.adapter_cpu(pairs[side.name]))
    bare = statistics.median(samples["bare"])
    figures: dict[str, Any] = {"bare_cpu": bare, "sides": {}}
    for side in sides:

        def med(task: str, key: str, name: str = side.name) -> float:
            return float(statistics.median(s[key] for s in samples[f"{name}:{task}"]))

        runs = samples[f"{side.name}:all"][0]["runs"]
        adapter = statistics.median(samples[f"{side.name}:adapter"])
        harness = (med("all", "cpu") - adapter) / runs
        figures["sides"][side.name] = {
            "runs_all": runs,
            "cpu_all": med("all", "cpu"),
            "adapter_all": adapter,
            "harness_cpu_per_run": harness,
            "runs_whole": samples[f"{side.name}:whole"][0]["runs"],
            "cpu_whole": med("whole", "cpu"),
            "whole_beyond_start": med("whole", "cpu") - bare,
            "wall_jobs1": med("all", "wall"),
            "wall_jobs2": med("all-jobs2", "wall"),
            "jobs2_over_jobs1": med("all-jobs2", "wall") / med("all", "wall"),
        }
    figures["samples"] = samples
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", metavar="REV", help="also measure this git revision")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--quick", action="store_true", help="the generic cases, one round, no base revision"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    use_compiled_bytecode()  # (as an installed streamproof: benchmarks/bytecode.py)
    repeat = 1 if args.quick else args.repeat
    cases = ["generic/*"] if args.quick else []
    with tempfile.TemporaryDirectory(prefix="streamproof-bench-base-") as tmp:
        sides = [Side("now", ROOT / "conformance", modern=True, cache=Path(tmp) / "cache-now")]
        if args.base and not args.quick:
            base = _extract(args.base, Path(tmp))
            sides.append(Side(args.base, base, modern=False, cache=Path(tmp) / "cache-base"))
        try:
            figures = measure(sides, repeat, cases)
        except Mismatch as exc:
            print(f"DATA MISMATCH: {exc}")
            return 1
    figures["repeat"] = repeat
    print(f"bare interpreter: {figures['bare_cpu'] * 1000:.1f} ms CPU (median of {repeat})")
    rows = (
        ("case runs (all)", "runs_all", "{:.0f}"),
        ("CPU, all (s)", "cpu_all", "{:.2f}"),
        ("adapter, all (s)", "adapter_all", "{:.2f}"),
        ("harness CPU/run (ms)", "harness_cpu_per_run", "{:.3f}"),
        ("whole: CPU beyond start (s)", "whole_beyond_start", "{:.2f}"),
        ("jobs 2 / jobs 1 (wall)", "jobs2_over_jobs1", "{:.2f}"),
    )
    names = list(figures["sides"])
    print(f"{'what':<30}" + "".join(f"{n:>14}" for n in names))
    for label, key, fmt in rows:
        values = [figures["sides"][n][key] for n in names]
        if key == "harness_cpu_per_run":
            values = [v * 1000 for v in values]
        print(f"{label:<30}" + "".join(f"{fmt.format(v):>14}" for v in values))
    if len(names) == 2:
        now, base = (figures["sides"][n] for n in names)
        ratio = now["harness_cpu_per_run"] / base["harness_cpu_per_run"]
        figures["harness_ratio"] = ratio
        print(f"harness CPU per case run: {ratio:.2f}× {names[1]}'s")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
