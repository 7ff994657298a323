"""The matrix shows each adapter's cost verdicts and throughput, apart from the cases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from streamproof.corpus import load_corpus
from streamproof.reporting.matrix import write_matrix

ROOT = Path(__file__).resolve().parent.parent
BASELINES = [ROOT / "reports" / "baselines" / f"{name}.json" for name in ("reference", "httpx-sse")]


def _scaling(tmp_path: Path) -> Path:
    path = tmp_path / "scaling.json"
    adapters = {
        "reference": {
            "dimensions": {"event-size": {"verdict": "linear", "exponent": 1.02}},
            "throughput": {"mb_per_s": 17.25, "chunks_per_s": 97440},
        },
        "httpx-sse": {"dimensions": {"event-size": {"verdict": "superlinear", "exponent": 1.91}}},
    }
    path.write_text(json.dumps({"tool": {}, "run": {}, "adapters": adapters}), encoding="utf-8")
    return path


def test_the_cost_table_has_a_column_per_adapter(tmp_path: Path) -> None:
    out = tmp_path / "matrix.html"
    write_matrix(BASELINES, out, load_corpus(), _scaling(tmp_path))
    html = out.read_text(encoding="utf-8")
    cost = html.split('<section id="cost">', 1)[1].split("</section>", 1)[0]
    assert "<th>event-size</th><td>linear (n^1.02)</td>" in cost
    assert '<td class="cost-bad">superlinear (n^1.91)</td>' in cost
    assert "<th>throughput MB/s</th><td>17.2</td><td></td>" in cost


def test_without_a_scaling_file_there_is_no_cost_section(tmp_path: Path) -> None:
    out = tmp_path / "matrix.html"
    write_matrix(BASELINES, out, load_corpus())
    assert 'id="cost"' not in out.read_text(encoding="utf-8")


def test_a_bad_scaling_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "scaling.json"
    bad.write_text('{"adapters": NaN}', encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "streamproof", "report", *map(str, BASELINES),
         "--scaling", str(bad), "--output", str(tmp_path / "m.html")],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "not a scaling file" in proc.stderr
