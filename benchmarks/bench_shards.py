"""What sharding a run costs: N shards of a run, and their merge, against the run itself.

Runs ``streamproof run --transport all --seed 1 --no-html --json`` over a
copy of the shipped corpus (taken once, so that every command sees the same
corpus) once whole, then as ``--shard K/N`` for every K (one after
another, as N machines of a CI matrix would each run one), and
``streamproof merge`` over the N results files. Each command runs inside the
small wrapper process of ``bench_scale.py`` so that its CPU time (user + system, the command and
its adapter worker) is its own. The figures are ratios of CPU time: the N
shards together over the whole run, and the same with the merge added. The
merged results must equal the whole run's but for the timings, or the script
prints DATA MISMATCH and exits 1.

    python benchmarks/bench_shards.py [--shards N] [--repeat N] [--floor-repeat N] [--quick]
                                      [--cold] [--json FILE]

``--quick`` runs the ``generic`` cases under ``whole`` only, once. ``--cold``
runs every command with an empty cache folder of its own, as each job of a
CI matrix starts (the bytecode stays compiled, as an installer leaves it).

It also splits what each shard beyond the first pays again, measured in the
same run, each piece on its own (``--floor-repeat`` times, medians): a bare
interpreter; the interpreter with the standard-library modules a run
imports; with all of the run's imports; the adapter worker started below its
supervisor, its handshake read, and stopped; and a run of one case under
``whole``. The *floor* is what no change to streamproof's own code can take
from a shard while each shard is a process of its own and runs its adapter
in an isolated process: the interpreter and standard library of the run, and
the supervised worker's start. The script prints the floor as a ratio (one
run plus N - 1 floors, over one run) beside the measured ratio, and what the
goal allows each extra shard.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

# The same checkout on PYTHONPATH and the same private cache as the scaling benchmark.
from bench_scale import Mismatch, _env, measure, selection, settle  # noqa: E402
from bench_startup import HANDSHAKE, _children_cpu  # noqa: E402
from bytecode import use_compiled_bytecode  # noqa: E402

# Every timed run: the copy of the shipped corpus, one seed, no HTML report.
RUN = ("run", "--corpus", "corpus", "--seed", "1", "--no-html", "-q")


def _cpu(args: list[str], env: dict[str, str], folder: Path) -> float:
    """CPU seconds of ``streamproof ARGS`` (``Mismatch`` unless it exits 0)."""
    return float(measure(args, env, folder, args[0])["cpu"])


def _but_timings(path: Path) -> Any:
    document = json.loads(path.read_text(encoding="utf-8"))
    document["run"].pop("date")
    document["run"].pop("merged", None)
    for row in document["results"]:
        row.pop("seconds")
    return document


def one_round(
    shards: int, extra: list[str], env: dict[str, str], tmp: Path, cold: bool = False
) -> dict[str, float]:
    run = [*RUN, *extra]
    fresh = iter(range(10**6))

    def env_of() -> dict[str, str]:  # --cold: an empty cache folder, as each CI job has
        if not cold:
            return env
        return {**env, "STREAMPROOF_CACHE_DIR": str(tmp / f"cold-{next(fresh)}")}

    whole = _cpu([*run, "--json", "whole.json"], env_of(), tmp)
    files = [f"s{k}.json" for k in range(1, shards + 1)]
    parts = [
        _cpu([*run, "--shard", f"{k}/{shards}", "--json", name], env_of(), tmp)
        for k, name in enumerate(files, 1)
    ]
    merge = _cpu(["merge", *files, "--corpus", "corpus", "--json", "merged.json"], env_of(), tmp)
    if _but_timings(tmp / "merged.json") != _but_timings(tmp / "whole.json"):
        raise Mismatch("the merged results differ from the whole run's")
    return {"whole": whole, "shards": sum(parts), "merge": merge, "largest_shard": max(parts)}


# The modules a run imports before it runs its first case (``streamproof run``'s path).
RUN_MODULES = (
    "streamproof.cli.run",
    "streamproof.cli.direct",
    "streamproof.harness.engine",
    "streamproof.harness.sharding",
)
GOAL = 1.15  # 4 shards against one run (benchmarks/README.md)
SUPERVISOR = ROOT / "conformance" / "streamproof" / "harness" / "supervisor.py"
# A worker's whole life: the handshake every run reads (bench_startup.py), then stop.
START_AND_STOP = HANDSHAKE + b'{"cmd": "stop"}\n'


def _process_cpu(argv: list[str], env: dict[str, str], folder: Path, stdin: bytes = b"") -> float:
    """CPU seconds of one process and of every process below it that was waited for.

    ``argv`` starting with ``"supervised"`` runs the rest below the supervisor, as
    ``spawn.Child`` starts an adapter: the supervisor holds one end of a lifeline."""
    ours, theirs = socket.socketpair()
    if argv[:1] == ["supervised"]:
        argv = [sys.executable, "-I", "-S", str(SUPERVISOR), str(theirs.fileno()), *argv[1:]]
    before = _children_cpu()
    with ours:
        proc = subprocess.Popen(
            argv,
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(theirs.fileno(),),
        )
        theirs.close()
        _, stderr = proc.communicate(stdin)  # (a worker stops on "stop"; its supervisor sweeps)
    spent = _children_cpu() - before
    if proc.returncode != 0:
        said = stderr.decode("utf-8", "replace").strip()[-300:]
        raise Mismatch(f"{' '.join(argv[-4:])} exited {proc.returncode}: {said}")
    return spent


def _stdlib_modules(env: dict[str, str], folder: Path) -> list[str]:
    """The standard-library modules that importing ``RUN_MODULES`` brings in."""
    stdlib = sysconfig.get_paths()["stdlib"]
    script = f"""
import sys
before = set(sys.modules)
import {", ".join(RUN_MODULES)}
for name in sorted(set(sys.modules) - before):
    path = getattr(sys.modules[name], "__file__", None) or ""
    if not path or path.startswith({stdlib!r}):
        print(name)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=folder, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise Mismatch(f"listing the run's imports failed: {done.stderr.strip()[-300:]}")
    return [n for n in done.stdout.split() if not n.startswith(("streamproof", "adapters"))]


def floor(env: dict[str, str], folder: Path, repeat: int) -> dict[str, float]:
    """What a shard pays again, piece by piece: CPU seconds, medians of ``repeat``."""
    python = sys.executable
    one_case = [
        "--case",
        "openai/text-stream-include-usage",
        "--transport",
        "whole",
        "--json",
        "one.json",
    ]
    pieces: dict[str, tuple[list[str], bytes]] = {
        "interpreter": ([python, "-c", "pass"], b""),
        "standard library": (
            [python, "-c", "import " + ", ".join(_stdlib_modules(env, folder))],
            b"",
        ),
        "run imports": ([python, "-c", "import " + ", ".join(RUN_MODULES)], b""),
        "supervised worker": (
            ["supervised", python, "-m", "streamproof.harness.worker", "reference"],
            START_AND_STOP,
        ),
        "one-case run": ([python, "-m", "streamproof", *RUN, *one_case], b""),
    }
    samples: dict[str, list[float]] = {name: [] for name in pieces}
    for _ in range(repeat):  # in turns, so that a busy moment of the machine falls on all
        for name, (argv, stdin) in pieces.items():
            samples[name].append(_process_cpu(argv, env, folder, stdin))
    return {name: statistics.median(values) for name, values in samples.items()}


def per_shard(pieces: dict[str, float], med: dict[str, float], shards: int) -> dict[str, Any]:
    """What each shard beyond the first pays again, against what the goal allows it."""
    extra = max(shards - 1, 1)
    floor_cpu = pieces["standard library"] + pieces["supervised worker"]
    own = pieces["run imports"] - pieces["standard library"]
    return {
        "pieces": pieces,
        "paid_again": (med["shards"] - med["whole"]) / extra,
        "allowed": (GOAL - 1) * med["whole"] / extra,
        "floor": floor_cpu,
        "own_imports": own,
        "rest_of_one_case_run": pieces["one-case run"]
        - pieces["run imports"]
        - pieces["supervised worker"],
        "floor_over_whole": 1 + extra * floor_cpu / med["whole"],
        "without_own_imports_over_whole": (med["shards"] - extra * own) / med["whole"],
    }


def print_per_shard(split: dict[str, Any], shards: int) -> None:
    pieces = split["pieces"]
    print(
        f"each shard beyond the first pays again {split['paid_again']:.3f} s of CPU; "
        f"{GOAL:.2f}× allows {split['allowed']:.3f} s"
    )
    print(
        f"  the floor, {split['floor']:.3f} s: the run's interpreter and standard library "
        f"{pieces['standard library']:.3f} s (a bare interpreter {pieces['interpreter']:.3f} s), "
        f"the adapter worker below its supervisor {pieces['supervised worker']:.3f} s"
    )
    print(
        f"  streamproof's own imports {split['own_imports']:.3f} s; the rest of a one-case run "
        f"(corpus load, plan, the case, results) {split['rest_of_one_case_run']:.3f} s"
    )
    print(
        f"  {shards} shards at the floor alone: {split['floor_over_whole']:.2f}× one run; "
        f"with streamproof's own imports free: {split['without_own_imports_over_whole']:.2f}×"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="generic cases, whole, once")
    parser.add_argument(
        "--cold", action="store_true", help="every command with an empty cache folder"
    )
    parser.add_argument(
        "--floor-repeat", type=int, default=15, help="rounds of the per-shard split (default 15)"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    use_compiled_bytecode()  # (as an installed streamproof: benchmarks/bytecode.py)
    repeat = 1 if args.quick else args.repeat
    extra = selection(args.quick)
    with tempfile.TemporaryDirectory(prefix="streamproof-shards-") as name:
        tmp = Path(name)
        env = _env(tmp / "cache")
        shutil.copytree(ROOT / "corpus", tmp / "corpus")
        settle()
        try:
            _cpu([*RUN, *extra], env, tmp)  # untimed: fills the caches
            samples = [one_round(args.shards, extra, env, tmp, args.cold) for _ in range(repeat)]
            pieces = floor(env, tmp, 1 if args.quick else args.floor_repeat)
        except Mismatch as exc:
            print(f"DATA MISMATCH: {exc}")
            return 1
    med = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    figures = {
        "repeat": repeat,
        "shards": args.shards,
        "cold": args.cold,
        "medians": med,
        "shards_over_whole": med["shards"] / med["whole"],
        "with_merge_over_whole": (med["shards"] + med["merge"]) / med["whole"],
        "largest_shard_over_whole": med["largest_shard"] / med["whole"],
        "samples": samples,
        "per_shard": per_shard(pieces, med, args.shards),
    }
    print(
        f"{args.shards} shards / one run, CPU: {figures['shards_over_whole']:.2f}× "
        f"({figures['with_merge_over_whole']:.2f}× with the merge); the largest shard "
        f"{figures['largest_shard_over_whole']:.2f}× of the run"
    )
    print_per_shard(figures["per_shard"], args.shards)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
