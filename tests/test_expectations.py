from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamproof.corpus import CorpusError
from streamproof.harness.expectations import load_expectations

IDS = {"generic/a", "generic/b"}


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
