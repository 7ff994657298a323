"""Every figure of the speed goals in one table, each a ratio measured in one run.

    python benchmarks/run_all.py [--base REV] [--repeat N] [--parsers-rev REV]
                                 [--quick] [--write] [--out FILE]

Runs ``bench_parsers.py`` (64 KiB reads, ``--memory``), ``bench_harness.py``
(against ``--base``, default 7aeba43), ``bench_scale.py``, ``bench_protocol.py``
and ``bench_shards.py``, each as a subprocess writing ``--json``, and builds one
Markdown table from what they wrote. A script that fails, or whose JSON lacks
a figure, makes its rows say so; the others are still filled in. ``--write``
puts the table into ``benchmarks/README.md`` between its two markers;
``--out FILE`` writes the table alone (the nightly's artifact).
``--parsers-rev REV`` runs that revision's ``bench_parsers.py`` with that
revision's package (extracted with ``git archive``): the parser figures
belong to the reference parser as it is there. ``--quick`` passes
``--quick`` to every script (figures that mean nothing, for the smoke test).
An option a script does not list in its ``--help`` is not passed to it.
The exit status is 1 with ``--strict`` when any script failed, else 0.
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bytecode import use_compiled_bytecode

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README = HERE / "README.md"
BEGIN = "<!-- benchmark-table:begin (python benchmarks/run_all.py --write) -->"
END = "<!-- benchmark-table:end -->"
TIMES = "\u00d7"


@dataclass
class Ran:
    """What one benchmark script wrote, or why it wrote nothing usable."""

    script: str
    data: dict[str, Any] | None
    failure: str = ""


def _supported(script: Path, argv: list[str], env: dict[str, str]) -> list[str]:
    """``argv`` without the options ``script --help`` does not list (an older script)."""
    try:
        shown = subprocess.run(
            [sys.executable, str(script), "--help"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return argv
    kept: list[str] = []
    skip = False
    for i, word in enumerate(argv):
        if skip:
            skip = False
            continue
        if word.startswith("--") and word not in shown:
            # its value, if it takes one, goes with it
            skip = i + 1 < len(argv) and not argv[i + 1].startswith("--")
            continue
        kept.append(word)
    return kept


def run_script(
    script: Path, argv: list[str], env: dict[str, str], folder: Path, timeout: float
) -> Ran:
    out = folder / f"{script.stem}.json"
    argv = _supported(script, argv, env)
    try:
        done = subprocess.run(
            [sys.executable, str(script), *argv, "--json", str(out)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Ran(script.name, None, f"{script.name} ran over {timeout:.0f} s")
    except OSError as exc:
        return Ran(script.name, None, f"{script.name} could not start: {exc}")
    if done.returncode != 0:
        lines = (done.stdout + done.stderr).strip().splitlines()
        tail = lines[-1] if lines else "no output"
        return Ran(script.name, None, f"{script.name} failed (exit {done.returncode}): {tail}")
    try:
        data = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Ran(script.name, None, f"{script.name} wrote no readable JSON: {exc}")
    return Ran(script.name, data if isinstance(data, dict) else None, "")


def _extract(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "conformance", "corpus", "schemas", "benchmarks"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _env(pythonpath: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *filter(None, [env.get("PYTHONPATH")])])
    return env


# A row: the figure, its goal, and how to read (measured, base, ratio, met) from the runs.
Cell = tuple[str, str, str, bool | None]


def _get(data: dict[str, Any] | None, *path: str | int) -> Any:
    value: Any = data
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def parser_rows(ran: Ran) -> list[tuple[str, str, Callable[[], Cell]]]:
    def target(key: str, goal: float) -> Callable[[], Cell]:
        def cell() -> Cell:
            found = [t for t in _get(ran.data, "targets") or [] if isinstance(t, dict)]
            value = max(found, key=lambda t: t.get("read_size") or 0).get(key) if found else None
            if not isinstance(value, (int, float)):
                raise LookupError(f"{ran.script} reported no {key!r}")
            library = found[-1].get("fastest_library") if key == "over_fastest_library" else None
            shown = f"{value:.2f}{TIMES}" + (f" ({library})" if library else "")
            return shown, "", shown, value >= goal

        return cell

    def memory() -> Cell:
        rows = [r for r in _get(ran.data, "memory") or [] if isinstance(r, dict)]
        if not rows:
            raise LookupError(f"{ran.script} reported no memory figure")
        row = max(rows, key=lambda r: r.get("event_bytes") or 0)
        ratio = float(row["ratio"])
        size = f"{row['event_bytes'] / 2**20:.0f} MiB"
        return f"{size}: {ratio:.2f}{TIMES} its size", "", f"{ratio:.2f}{TIMES}", ratio <= 3

    return [
        ("reference parser vs naive `split` + `json.loads` (64 KiB reads)", "≥ 0.9×",
         target("over_naive", 0.9)),
        ("reference parser vs the fastest SSE library, same loader", "≥ 1.2×",
         target("over_fastest_library", 1.2)),
        ("one large event (1 KiB reads): extra memory / event size", "≤ 3×", memory),
    ]  # fmt: skip


def harness_rows(ran: Ran, base: str) -> list[tuple[str, str, Callable[[], Cell]]]:
    def sides() -> tuple[dict[str, Any], dict[str, Any] | None]:
        found = _get(ran.data, "sides")
        if not isinstance(found, dict) or "now" not in found:
            raise LookupError(f"{ran.script} reported no figures")
        return found["now"], found.get(base)

    def harness() -> Cell:
        now, old = sides()
        if old is None:
            ms = now["harness_cpu_per_run"] * 1000
            return f"{ms:.2f} ms", "not measured", "n/a", None
        ratio = now["harness_cpu_per_run"] / old["harness_cpu_per_run"]
        return (
            f"{now['harness_cpu_per_run'] * 1000:.2f} ms",
            f"{old['harness_cpu_per_run'] * 1000:.2f} ms",
            f"{ratio:.2f}{TIMES}",
            ratio <= 0.4,
        )

    def whole() -> Cell:
        now, old = sides()
        value = now["whole_beyond_start"]
        if old is None:
            return f"{value:.2f} s", "not measured", "n/a", value <= 0.6
        ratio = value / old["whole_beyond_start"]
        return (
            f"{value:.2f} s",
            f"{old['whole_beyond_start']:.2f} s",
            f"{ratio:.2f}{TIMES}",
            (value <= 0.6),
        )

    def jobs() -> Cell:
        now, old = sides()
        value = now["jobs2_over_jobs1"]
        shown_old = "not measured" if old is None else f"{old['jobs2_over_jobs1']:.2f}{TIMES}"
        return f"{value:.2f}{TIMES}", shown_old, f"{value:.2f}{TIMES}", value <= 1.0

    return [
        ("harness CPU per case run, `run --transport all` (all CPU - adapter CPU) / runs",
         f"≤ 0.4× {base}", harness),
        ("`run --transport whole`: CPU beyond a bare interpreter's start", "≤ 0.6 s", whole),
        ("`--jobs 2` / `--jobs 1`, wall time, all transports", "≤ 1.0×", jobs),
    ]  # fmt: skip


def scale_rows(ran: Ran) -> list[tuple[str, str, Callable[[], Cell]]]:
    def ratio(key: str, goal: float, what: str) -> Callable[[], Cell]:
        def cell() -> Cell:
            value = _get(ran.data, key)
            med = _get(ran.data, "medians")
            if not isinstance(value, (int, float)) or not isinstance(med, dict):
                raise LookupError(f"{ran.script} reported no {key!r}")
            unit = "cpu" if what == "time" else "rss_kib"
            one, ten = med["1x"][unit], med["10x"][unit]
            shown = (
                f"{one:.2f} → {ten:.2f} s"
                if what == "time"
                else (f"{one / 1024:.0f} → {ten / 1024:.0f} MiB")
            )
            return shown, "", f"{value:.2f}{TIMES}", value <= goal

        return cell

    return [
        ("10× corpus, `run --transport all`: CPU time / the 1× corpus's", "≤ 10.5×",
         ratio("time_ratio", 10.5, "time")),
        ("10× corpus: peak memory (RSS) / the 1× corpus's", "≤ 2×",
         ratio("memory_ratio", 2.0, "memory")),
    ]  # fmt: skip


def protocol_rows(ran: Ran) -> list[tuple[str, str, Callable[[], Cell]]]:
    def cell() -> Cell:
        value = _get(ran.data, "ratio")
        if not isinstance(value, (int, float)):
            raise LookupError(f"{ran.script} reported no ratio")
        return f"{value:.0f}{TIMES}", "", f"{value:.0f}{TIMES}", value >= 20

    return [("one process per case / one persistent worker", "≥ 20×", cell)]


def shard_rows(ran: Ran) -> list[tuple[str, str, Callable[[], Cell]]]:
    def cell() -> Cell:
        value = _get(ran.data, "shards_over_whole")
        merged = _get(ran.data, "with_merge_over_whole")
        if not isinstance(value, (int, float)) or not isinstance(merged, (int, float)):
            raise LookupError(f"{ran.script} reported no ratio")
        shown = f"{value:.2f}{TIMES} ({merged:.2f}{TIMES} with the merge"
        floor = _get(ran.data, "per_shard", "floor_over_whole")
        if isinstance(floor, (int, float)):  # what no change to streamproof's code can go below
            shown += f"; the floor {floor:.2f}{TIMES}"
        return shown + ")", "", f"{value:.2f}{TIMES}", value <= 1.15

    return [("4 shards / one run, CPU, `run --transport all`", "≤ 1.15×", cell)]


def table(groups: list[tuple[Ran, list[tuple[str, str, Callable[[], Cell]]]]], base: str) -> str:
    lines = [
        f"| figure | goal | now | {base} | ratio | met |",
        "|---|---|---|---|---|---|",
    ]
    for ran, rows in groups:
        for label, goal, read in rows:
            if ran.failure:
                lines.append(f"| {label} | {goal} | {ran.failure} | | | not measured |")
                continue
            try:
                now, old, ratio, met = read()
            except (LookupError, TypeError, ValueError, ZeroDivisionError) as exc:
                lines.append(f"| {label} | {goal} | {exc} | | | not measured |")
                continue
            verdict = "n/a" if met is None else "yes" if met else "**no**"
            lines.append(f"| {label} | {goal} | {now} | {old} | {ratio} | {verdict} |")
    return "\n".join(lines) + "\n"


def write_readme(block: str) -> None:
    text = README.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{README}: the table's markers are missing")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{BEGIN}\n{block}{END}{tail}", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="7aeba43", metavar="REV")
    parser.add_argument("--repeat", type=int, default=3, help="rounds for each script")
    parser.add_argument("--parsers-rev", metavar="REV", help="run this revision's bench_parsers")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--write", action="store_true", help="update benchmarks/README.md")
    parser.add_argument("--out", type=Path, metavar="FILE", help="also write the table here")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per script")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a script failed")
    args = parser.parse_args()
    use_compiled_bytecode()  # (as an installed streamproof: benchmarks/bytecode.py)
    quick = ["--quick"] if args.quick else []
    repeat = [] if args.quick else ["--repeat", str(args.repeat)]
    here = _env(ROOT / "conformance")
    with tempfile.TemporaryDirectory(prefix="streamproof-run-all-") as name:
        tmp = Path(name)
        parsers_script, parsers_env = HERE / "bench_parsers.py", here
        if args.parsers_rev:
            try:
                tree = _extract(args.parsers_rev, tmp / "parsers-rev")
                parsers_script = tree / "benchmarks" / "bench_parsers.py"
                parsers_env = _env(tree / "conformance")
            except subprocess.CalledProcessError as exc:
                print(f"cannot extract {args.parsers_rev}: {exc.stderr.decode().strip()}")
        runs = {
            "parsers": run_script(
                parsers_script,
                [*quick, *repeat, "--read-size", "65536", "--memory"],
                parsers_env,
                tmp,
                args.timeout,
            ),
            "harness": run_script(
                HERE / "bench_harness.py",
                [*quick, *repeat, "--base", args.base],
                here,
                tmp,
                args.timeout,
            ),
            "scale": run_script(
                HERE / "bench_scale.py", [*quick, *repeat], here, tmp, args.timeout
            ),
            "protocol": run_script(
                HERE / "bench_protocol.py", [*quick, *repeat], here, tmp, args.timeout
            ),
            "shards": run_script(
                HERE / "bench_shards.py", [*quick, *repeat], here, tmp, args.timeout
            ),
        }
    body = table(
        [
            (runs["parsers"], parser_rows(runs["parsers"])),
            (runs["harness"], harness_rows(runs["harness"], args.base)),
            (runs["scale"], scale_rows(runs["scale"])),
            (runs["protocol"], protocol_rows(runs["protocol"])),
            (runs["shards"], shard_rows(runs["shards"])),
        ],
        args.base,
    )
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parsers_from = f", parsers from {args.parsers_rev}" if args.parsers_rev else ""
    note = (
        f"\nMeasured {when}{' with --quick (figures mean nothing)' if args.quick else ''}, "
        f"{args.repeat if not args.quick else 1} round(s) per script{parsers_from}; "
        "CPU times, medians; every ratio from one run on one machine.\n"
    )
    block = body + note
    print(block, end="")
    if args.out:
        args.out.write_text(block, encoding="utf-8")
    if args.write:
        write_readme(block)
    return 1 if args.strict and any(r.failure for r in runs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
