"""How a run grows with the corpus: the shipped corpus against one 10 times its size.

Builds, in a temporary folder, a copy of the shipped corpus (1×) and a corpus
with every case there ten times (10×: the real case plus nine copies under new
ids ``<slug>-copy-<k>``, its ``case.json`` differing only in its ``id``), and
writes each one's manifest with ``streamproof manifest --corpus DIR``. Then
runs ``streamproof run --corpus DIR --transport all --seed 1 --no-html`` on
each, every run inside a small wrapper process so that its figures are its
own: CPU time (user + system, the run and its adapter worker), wall time,
and peak memory (the largest resident set of any of its processes: the run
itself). A 10× run that does not score ten times the case runs, or any run
that does not exit 0, prints DATA MISMATCH and the exit status is 1.

    python benchmarks/bench_scale.py [--repeat N] [--quick] [--json FILE]

``--quick`` runs the ``generic`` cases under ``whole`` only, once.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bytecode import use_compiled_bytecode

ROOT = Path(__file__).resolve().parent.parent
COPIES = 10

# Runs one command and prints its own CPU, wall time and peak RSS (KiB) as JSON.
_WRAPPER = """
import json, resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": done.returncode, "cpu": usage.ru_utime + usage.ru_stime,
                  "wall": wall, "rss_kib": usage.ru_maxrss,
                  "stderr": done.stderr.decode("utf-8", "replace")[-300:]}))
"""


class Mismatch(Exception):
    pass


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "conformance"), *filter(None, [env.get("PYTHONPATH")])]
    )
    env["STREAMPROOF_CACHE_DIR"] = str(cache)
    return env


def settle() -> None:
    """Wait until files copied just now are old enough for a corpus load to keep
    (``streamproof.corpus.load_cache``), so that the untimed warm-up run leaves the
    load cache that every timed run reads, as where a corpus has been in place a while."""
    from streamproof.corpus.load_cache import RECENT_NS

    time.sleep(RECENT_NS / 1e9 + 0.1)


def build(source: Path, target: Path, copies: int, env: dict[str, str]) -> int:
    """``target``: ``source`` with every case ``copies`` times; returns the case count."""
    shutil.copytree(source, target)
    count = 0
    for folder in sorted((target / "cases").glob("*/*")):
        case_json = folder / "case.json"
        if not case_json.is_file():
            continue
        count += 1
        text = case_json.read_text(encoding="utf-8")
        old = json.loads(text)["id"]
        for k in range(1, copies):
            new = f"{old}-copy-{k}"
            twin = folder.with_name(f"{folder.name}-copy-{k}")
            shutil.copytree(folder, twin)
            edited = text.replace(json.dumps(old), json.dumps(new), 1)
            if json.loads(edited)["id"] != new:
                raise Mismatch(f"cannot rename {old} in its case.json")
            (twin / "case.json").write_text(edited, encoding="utf-8")
            count += 1
    done = subprocess.run(
        [sys.executable, "-m", "streamproof", "manifest", "--corpus", str(target)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise Mismatch(f"manifest --corpus {target.name}: {done.stderr.strip()[-300:]}")
    return count


def measure(args: list[str], env: dict[str, str], folder: Path, what: str) -> dict[str, Any]:
    """CPU, wall time and peak RSS of ``streamproof ARGS`` run in ``folder``, inside the
    wrapper (``Mismatch``, naming ``what``, unless it exits 0)."""
    argv = [sys.executable, "-m", "streamproof", *args]
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *argv],
        env=env,
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise Mismatch(f"the wrapper failed: {done.stderr.strip()[-300:]}")
    figures: dict[str, Any] = json.loads(done.stdout)
    if figures["code"] != 0:
        raise Mismatch(f"{what} exited {figures['code']}: {figures['stderr']}")
    return figures


def selection(quick: bool) -> list[str]:
    """What a timed run scores: every case under every transport, or with ``--quick``
    the ``generic`` cases under ``whole``."""
    return ["--case", "generic/*", "--transport", "whole"] if quick else ["--transport", "all"]


def run(corpus: Path, extra: list[str], env: dict[str, str], folder: Path) -> dict[str, Any]:
    out = folder / f"results-{corpus.name}.json"
    args = ["run", "--corpus", str(corpus), "--seed", "1", "--no-html", "-q"]
    figures = measure([*args, "--json", str(out), *extra], env, folder, f"run on {corpus.name}")
    figures["runs"] = len(json.loads(out.read_text(encoding="utf-8"))["results"])
    out.unlink()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="generic cases, whole, once")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    use_compiled_bytecode()  # (as an installed streamproof: benchmarks/bytecode.py)
    repeat = 1 if args.quick else args.repeat
    extra = selection(args.quick)
    with tempfile.TemporaryDirectory(prefix="streamproof-scale-") as name:
        tmp = Path(name)
        env = _env(tmp / "cache")
        try:
            source = ROOT / "corpus"
            sizes = {
                "1x": build(source, tmp / "x1", 1, env),
                "10x": build(source, tmp / "x10", COPIES, env),
            }
            samples: dict[str, list[dict[str, Any]]] = {"1x": [], "10x": []}
            settle()
            for key in samples:
                run(tmp / ("x1" if key == "1x" else "x10"), extra, env, tmp)  # warm
            for _ in range(repeat):
                for key in samples:
                    corpus = tmp / ("x1" if key == "1x" else "x10")
                    samples[key].append(run(corpus, extra, env, tmp))
            one, ten = (samples[k][0]["runs"] for k in ("1x", "10x"))
            if ten != COPIES * one:
                raise Mismatch(f"10x scored {ten} case runs, not {COPIES} × {one}")
        except Mismatch as exc:
            print(f"DATA MISMATCH: {exc}")
            return 1
    med = {
        key: {m: statistics.median(s[m] for s in samples[key]) for m in ("cpu", "wall", "rss_kib")}
        for key in samples
    }
    figures = {
        "repeat": repeat,
        "cases": sizes,
        "runs": {"1x": one, "10x": ten},
        "medians": med,
        "time_ratio": med["10x"]["cpu"] / med["1x"]["cpu"],
        "wall_ratio": med["10x"]["wall"] / med["1x"]["wall"],
        "memory_ratio": med["10x"]["rss_kib"] / med["1x"]["rss_kib"],
        "samples": samples,
    }
    print(f"{'corpus':<8}{'cases':>8}{'runs':>8}{'CPU s':>10}{'wall s':>10}{'peak RSS MiB':>15}")
    for key in ("1x", "10x"):
        m = med[key]
        print(
            f"{key:<8}{sizes[key]:>8}{figures['runs'][key]:>8}{m['cpu']:>10.2f}"
            f"{m['wall']:>10.2f}{m['rss_kib'] / 1024:>15.1f}"
        )
    print(
        f"10x / 1x: CPU {figures['time_ratio']:.2f}×, wall {figures['wall_ratio']:.2f}×, "
        f"peak memory {figures['memory_ratio']:.2f}×"
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
