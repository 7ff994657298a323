"""A crash explains itself: the adapter's traceback and what it printed, beside its case."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ADAPTERS = Path(__file__).resolve().parent / "adapters"
CASE = "generic/finish-without-done"


def _run(tmp_path: Path, adapter: str, *more: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    results = tmp_path / "results.json"
    html = tmp_path / "report.html"
    proc = subprocess.run(
        [sys.executable, "-m", "streamproof", "run", "--adapter", str(ADAPTERS / adapter),
         "--case", f"{CASE} [whole]", "--json", str(results), "--html", str(html), *more],
        capture_output=True, text=True, cwd=tmp_path, check=False, timeout=300,
    )  # fmt: skip
    return proc, json.loads(results.read_text(encoding="utf-8"))


def test_a_crash_shows_the_adapters_file_and_line_in_terminal_json_and_html(
    tmp_path: Path,
) -> None:
    proc, document = _run(tmp_path, "raises.py")
    assert proc.returncode == 1
    where = f'{ADAPTERS / "raises.py"}", line 7, in parse'
    assert where in proc.stdout
    assert "streamproof/harness" not in proc.stdout  # the harness's frames are left out
    row = document["results"][0]
    assert row["verdict"] == "crash" and where in row["traceback"]
    assert row["traceback"].splitlines()[-2:] == ["ValueError: parser exploded", "on two lines"]
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "raises.py&#34;, line 7, in parse" in html or "raises.py&quot;, line 7, in parse" in html


def test_what_an_adapter_prints_is_kept_beside_its_case(tmp_path: Path) -> None:
    proc, document = _run(tmp_path, "prints.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert document["results"][0]["output"] == "debug: {not protocol}\n"
