"""A run that writes neither pytest's HTML report nor JUnit XML runs without pytest
(``cli.direct``); the same run through pytest gives the same results but for the
time each case run took, fails and stops (``-x``) at the same case runs, and
says the same when it cannot go on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from commands import load, streamproof

ADAPTERS = Path(__file__).parent / "adapters"

# Cases of every severity, the known failures below, transports with and without chunks.
SELECTION = ["--case", "generic/*", "--case", "sse-spec/*", "--transport", "whole,bytes,recorded"]


def _but_timings(document: dict[str, Any]) -> dict[str, Any]:
    document["run"].pop("date")
    for row in document["results"]:
        row.pop("seconds")
    return document


def _said(done: subprocess.CompletedProcess[str]) -> list[str]:
    """What the run printed, but the lines naming its output files."""
    return [
        line for line in done.stdout.splitlines() if not line.startswith(("results:", "junit:"))
    ]


def _run(
    tmp_path: Path, name: str, *args: str | Path, pytest_path: bool
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """``run ARGS`` and its results, through pytest when ``pytest_path`` (a JUnit file
    asked for: pytest writes it) or straight."""
    extra = ["--junit", tmp_path / f"{name}.xml"] if pytest_path else []
    results = [] if "-x" in args else ["--json", f"{name}.json"]
    done = streamproof("run", *args, "--no-html", *results, *extra, cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    return done, None if "-x" in args else load(tmp_path / f"{name}.json")


@pytest.mark.parametrize(
    "adapter",
    [
        "reference",
        ADAPTERS / "drops_second_tool_call.py",  # fails some cases
        ADAPTERS / "content_only.py",  # declares less: skips and groups not exposed
    ],
    ids=["reference", "failing", "partial"],
)
def test_the_results_are_those_of_the_run_through_pytest(tmp_path: Path, adapter: Path) -> None:
    args = ["--adapter", adapter, *SELECTION, "--fail-on", "should"]
    direct, results = _run(tmp_path, "direct", *args, pytest_path=False)
    through, results_through = _run(tmp_path, "pytest", *args, pytest_path=True)
    assert _but_timings(results) == _but_timings(results_through)
    assert (direct.returncode, _said(direct)) == (through.returncode, _said(through))


def test_exitfirst_stops_at_the_same_case_run(tmp_path: Path) -> None:
    args = ["--adapter", ADAPTERS / "drops_second_tool_call.py", *SELECTION, "-x"]
    direct, _ = _run(tmp_path, "direct", *args, pytest_path=False)
    through, _ = _run(tmp_path, "pytest", *args, pytest_path=True)
    said = _said(direct)
    assert any(line.startswith("stopped at the first failure (-x) after") for line in said)
    assert (direct.returncode, said) == (through.returncode, _said(through))


def test_a_run_without_pytest_reports_loads_no_pytest(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom streamproof.cli import main\n"
        "code = main(['run', '--case', 'generic/*', '--transport', 'whole', '--no-html', '-q'])\n"
        "print('pytest' in sys.modules, code)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert done.stdout.splitlines()[-1] == "False 0", done.stderr


@pytest.mark.parametrize("pytest_path", [False, True], ids=["direct", "pytest"])
def test_an_adapter_that_cannot_start_again_is_one_line(tmp_path: Path, pytest_path: bool) -> None:
    # The probe starts it; the second process of --jobs 2 finds it broken.
    adapter = tmp_path / "once.py"
    adapter.write_text(
        "from pathlib import Path\n"
        f"marker = Path({str(tmp_path / 'started')!r})\n"
        "if marker.exists():\n"
        "    raise RuntimeError('this adapter starts once')\n"
        "marker.touch()\n"
        "def parse(response):\n"
        "    return {}\n",
        encoding="utf-8",
    )
    extra = ["--junit", "run.xml"] if pytest_path else []
    done = streamproof(
        "run", "--adapter", adapter, "--jobs", "2", "--case", "generic/*", "--no-html",
        *extra, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("streamproof: the run stopped after 0 of "), done.stderr
    assert "this adapter starts once" in done.stderr


def test_a_case_changed_during_the_run_stops_it_in_one_line(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    root = Path(__file__).parent.parent / "corpus"
    subprocess.run(["cp", "-r", str(root), str(corpus)], check=True)
    # An adapter that rewrites a later case's body once the first case has run.
    cases = sorted((corpus / "cases" / "generic").iterdir())
    first, later = cases[0].name, cases[1]
    body = next(p for p in later.iterdir() if p.name.startswith("response."))
    adapter = tmp_path / "rewrites.py"
    adapter.write_text(
        "from pathlib import Path\n"
        "from streamproof.reference import ResponseReader\n"
        "def parse(response):\n"
        f"    Path({str(body)!r}).write_bytes(b'changed')\n"
        "    reader = ResponseReader(response.status, response.headers, response.request)\n"
        "    for data in response.iter_bytes():\n"
        "        reader.feed(data)\n"
        "    return reader.close()\n",
        encoding="utf-8",
    )
    done = streamproof(
        "run", "--adapter", adapter, "--corpus", corpus, "--case", f"generic/{first}",
        "--case", f"generic/{later.name}", "--transport", "whole", "--no-html", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stderr.strip()
    assert "\n" not in line
    assert line.startswith("streamproof: the run stopped after 1 of 2 case runs:"), line
    assert json.dumps(str(later.relative_to(tmp_path)))[1:-1] in line or later.name in line
