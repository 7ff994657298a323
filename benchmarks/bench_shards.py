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

    python benchmarks/bench_shards.py [--shards N] [--repeat N] [--quick] [--cold] [--json FILE]

``--quick`` runs the ``generic`` cases under ``whole`` only, once. ``--cold``
runs every command with an empty cache folder of its own, as each job of a
CI matrix starts (the bytecode stays compiled, as an installer leaves it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

# The same checkout on PYTHONPATH and the same private cache as the scaling benchmark.
from bench_scale import Mismatch, _env, measure, settle  # noqa: E402
from bytecode import use_compiled_bytecode  # noqa: E402


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
    run = ["run", "--corpus", "corpus", "--seed", "1", "--no-html", "-q", *extra]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="generic cases, whole, once")
    parser.add_argument(
        "--cold", action="store_true", help="every command with an empty cache folder"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    use_compiled_bytecode()  # (as an installed streamproof: benchmarks/bytecode.py)
    repeat = 1 if args.quick else args.repeat
    extra = ["--case", "generic/*", "--transport", "whole"] if args.quick else []
    extra = extra or ["--transport", "all"]
    with tempfile.TemporaryDirectory(prefix="streamproof-shards-") as name:
        tmp = Path(name)
        env = _env(tmp / "cache")
        shutil.copytree(ROOT / "corpus", tmp / "corpus")
        settle()
        try:
            _cpu(["run", "--corpus", "corpus", "--seed", "1", "--no-html", "-q", *extra], env, tmp)
            samples = [one_round(args.shards, extra, env, tmp, args.cold) for _ in range(repeat)]
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
    }
    print(
        f"{args.shards} shards / one run, CPU: {figures['shards_over_whole']:.2f}× "
        f"({figures['with_merge_over_whole']:.2f}× with the merge); the largest shard "
        f"{figures['largest_shard_over_whole']:.2f}× of the run"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
