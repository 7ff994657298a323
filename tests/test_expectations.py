from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import CorpusError
from streamproof.harness.expectations import load_expectations

IDS = {"generic/a", "generic/b"}
NAIVE = Path(__file__).parent / "adapters" / "naive_lines.py"
CR_CASE = "sse-spec/cr-line-endings"  # the naive parser crashes on it


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "expect.json"
    path.write_text(json.dumps(data))
    return path


def test_lookup_by_case_and_transport(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "expectations": [
                {"case": "generic/a", "reason": "all transports"},
                {
                    "case": "generic/b",
                    "transport": "bytes",
                    "reason": "only bytes",
                    "issue": "https://example.org/1",
                },
            ]
        },
    )
    expectations = load_expectations(path, IDS)
    assert expectations.find("generic/a", "lines") is not None
    entry = expectations.find("generic/b", "bytes")
    assert entry is not None and entry.issue == "https://example.org/1"
    assert expectations.find("generic/b", "whole") is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"expectations": [{"case": "generic/zz", "reason": "x"}]}, "not a case of this corpus"),
        ({"expectations": [{"case": "generic/a"}]}, "'reason' is a required property"),
        (
            {"expectations": [{"case": "generic/a", "reason": "x", "transprot": "bytes"}]},
            "transprot",
        ),
        (
            {
                "expectations": [
                    {"case": "generic/a", "reason": "x"},
                    {"case": "generic/a", "reason": "y"},
                ]
            },
            "listed twice",
        ),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(CorpusError) as info:
        load_expectations(write(tmp_path, data), IDS)
    assert message in info.value.problems[0]
    assert str(tmp_path) in info.value.problems[0]


def test_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "expect.json").write_text("{")
    with pytest.raises(CorpusError, match="cannot read expectations"):
        load_expectations(tmp_path / "expect.json", IDS)


# -------------------------------------------------------------- field groups (semantics §12.6)


def _groups_run(
    tmp_path: Path,
    entry: dict[str, Any],
    adapter: Path = NAIVE,
    case: str = CR_CASE,
    transport: str = "whole",
) -> subprocess.CompletedProcess[str]:
    expect = tmp_path / "expect.json"
    expect.write_text(json.dumps({"expectations": [entry]}), encoding="utf-8")
    return subprocess.run(
        [
            *(sys.executable, "-m", "streamproof", "run", "--adapter", str(adapter)),
            *("--case", case, "--transport", transport, "--no-html", "--expect", str(expect)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


EVERY = ["status", "content", "finish_reason", "deltas"]  # a crash is wrong on each


def test_a_known_failure_names_its_groups_and_a_new_group_fails_the_run(tmp_path: Path) -> None:
    """The naive parser crashes on CR line ends: wrong on every group it is judged on."""
    listed = {"case": CR_CASE, "reason": "LF only", "groups": EVERY}
    proc = _groups_run(tmp_path, listed)
    assert proc.returncode == 0 and "1 xfailed" in proc.stdout, proc.stdout + proc.stderr
    fewer = {**listed, "groups": EVERY[1:]}  # status fails too, and is not listed
    proc = _groups_run(tmp_path, fewer)
    assert proc.returncode == 1, proc.stdout
    assert "status now fails too (known failure lists content, deltas, finish_reason)" in (
        proc.stdout
    )


def test_a_listed_group_that_passes_is_xpass(tmp_path: Path) -> None:
    """The buffering parser surfaces its text late under bytes, and gets the text right."""
    case = "generic/content-surfaces-per-event"
    entry = {"case": case, "reason": "buffers", "groups": ["deltas"]}
    buffers = NAIVE.parent / "buffers.py"
    proc = _groups_run(tmp_path, entry, buffers, case, "bytes")
    assert proc.returncode == 0 and "1 xfailed" in proc.stdout, proc.stdout + proc.stderr
    entry["groups"] = ["content", "deltas"]  # its content is right
    proc = _groups_run(tmp_path, entry, buffers, case, "bytes")
    assert proc.returncode == 1 and "XPASS" in proc.stdout, proc.stdout
    assert "but content passes: update the entry" in proc.stdout


def test_an_entry_without_groups_keeps_its_meaning_with_a_warning(tmp_path: Path) -> None:
    proc = _groups_run(tmp_path, {"case": CR_CASE, "reason": "LF only"})
    assert proc.returncode == 0 and "1 xfailed" in proc.stdout
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "1 of 1 known failures name no field groups" in warnings[0]
