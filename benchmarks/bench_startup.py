"""What starting streamproof costs: ``--help``, ``list`` and one adapter worker.

Each figure is the CPU time (user + system) of a fresh interpreter doing one
thing, divided by the CPU time of a bare ``python -c pass`` measured in the
same run, so the ratio holds across machines. With ``--base REV`` the same
three things are measured on another revision of the package too (its
``conformance/`` folder extracted from git into a temporary folder and put
first on ``PYTHONPATH``; the installed dependencies are shared), so "before"
and "after" come from one run on one machine.

    python benchmarks/bench_startup.py [--base REV] [--repeat N] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from bytecode import use_compiled_bytecode

ROOT = Path(__file__).resolve().parent.parent
HANDSHAKE = b'{"cmd": "start", "protocol": 1}\n'


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_of(run: Callable[[], None]) -> float:
    before = _children_cpu()
    run()
    return _children_cpu() - before


def _env(pythonpath: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return env


def _command(argv: list[str], env: dict[str, str]) -> Callable[[], None]:
    def run() -> None:
        done = subprocess.run(
            [sys.executable, *argv], env=env, capture_output=True, check=False, timeout=120
        )
        if done.returncode != 0:
            raise SystemExit(f"MISMATCH: {' '.join(argv)} exited {done.returncode}")

    return run


def _worker(module: str, env: dict[str, str]) -> Callable[[], None]:
    """Start the worker, read its handshake, stop it: what every run pays once."""

    def run() -> None:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, "reference"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(HANDSHAKE)
        proc.stdin.flush()
        hello = json.loads(proc.stdout.readline())
        proc.stdin.write(b'{"cmd": "stop"}\n')
        proc.stdin.close()
        proc.wait(timeout=60)
        if hello.get("name") != "reference":
            raise SystemExit(f"MISMATCH: the worker answered {hello!r}")

    return run


def _extract(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "conformance", "corpus", "schemas", "adapters"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "conformance"


def _tasks(pythonpath: Path | None, worker: str) -> dict[str, Callable[[], None]]:
    env = _env(pythonpath)
    return {
        "--help": _command(["-m", "streamproof", "--help"], env),
        "list": _command(["-m", "streamproof", "list"], env),
        "worker start": _worker(worker, env),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", metavar="REV", help="also measure this git revision")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="one round, no base revision")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    use_compiled_bytecode()  # (as an installed streamproof: benchmarks/bytecode.py)
    repeat = 1 if args.quick else args.repeat

    with tempfile.TemporaryDirectory(prefix="streamproof-bench-") as tmp:
        sides: dict[str, dict[str, Callable[[], None]]] = {
            "now": _tasks(None, "streamproof.harness.worker")
        }
        if args.base and not args.quick:
            # The base revision may predate streamproof.harness.worker; its worker is the old path.
            sides[args.base] = _tasks(_extract(args.base, Path(tmp)), "streamproof.worker")
        bare = _command(["-c", "pass"], _env(None))
        samples: dict[str, list[float]] = {"bare": []}
        for side, tasks in sides.items():
            for name in tasks:
                samples[f"{side}:{name}"] = []
        for task in [bare, *(t for tasks in sides.values() for t in tasks.values())]:
            task()  # warm the file cache and the bytecode caches
        for _ in range(repeat):  # rounds take turns, so a busy moment hits every figure
            samples["bare"].append(_cpu_of(bare))
            for side, tasks in sides.items():
                for name, task in tasks.items():
                    samples[f"{side}:{name}"].append(_cpu_of(task))

    medians = {key: statistics.median(values) for key, values in samples.items()}
    bare_cpu = max(medians["bare"], 1e-6)
    print(f"bare interpreter: {medians['bare'] * 1000:.1f} ms CPU (median of {repeat})")
    print(f"{'what':<14}" + "".join(f"{side:>22}" for side in sides))
    for name in ("--help", "list", "worker start"):
        row = f"{name:<14}"
        for side in sides:
            cpu = medians[f"{side}:{name}"]
            row += f"{cpu * 1000:>11.1f} ms {cpu / bare_cpu:>6.1f}×"
        print(row)
    if args.json:
        args.json.write_text(
            json.dumps({"repeat": repeat, "medians": medians, "samples": samples}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
