"""``fuzz --out DIR``: a new or empty folder only, nothing written through a link.

A pull request shipping ``fuzz-candidates/`` can plant a link at the
predictable ``cases/generic/fuzz-<adapter>-seed<N>-<k>/case.json``; the
fuzzer must refuse it rather than write through it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from streamproof.cli import main
from streamproof.errors import CorpusError
from streamproof.fuzz.case import write_candidate
from streamproof.fuzz.generate import draw
from streamproof.harness.loader import CAPABILITIES

from .corpus_builder import one_line

ADAPTERS = Path(__file__).parents[1] / "adapters"
SLUG = "fuzz-broken-seed0-1"
VICTIM_TEXT = "do not overwrite\n"


def _write(out: Path) -> Path:
    response = draw(random.Random(0), frozenset(CAPABILITIES))
    return write_candidate(
        out, response, [1, 2], adapter="broken", seed=0, example=1, divergence="x: y"
    )


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM_TEXT, encoding="utf-8")
    return victim


@pytest.mark.parametrize(
    "planted",
    [
        f"cases/generic/{SLUG}/case.json",
        f"cases/generic/{SLUG}",
        "cases/generic",
        "cases",
        "VERSION",
        "FORMAT",
    ],
)
def test_a_link_planted_under_out_is_refused_and_its_target_untouched(
    tmp_path: Path, planted: str
) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "out2"
    link = out / planted
    link.parent.mkdir(parents=True)
    link.symlink_to(victim if planted.endswith(".json") or planted.isupper() else tmp_path)
    with pytest.raises(OSError):
        _write(out)
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out2", "victim.txt"]


def test_a_manifest_link_planted_under_out_is_refused_and_its_target_untouched(
    tmp_path: Path,
) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "out2"
    out.mkdir()
    (out / "manifest.json").symlink_to(victim)
    with pytest.raises((OSError, CorpusError)):
        _write(out)
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT
    assert (out / "manifest.json").is_symlink()


def test_a_fresh_folder_takes_a_candidate(tmp_path: Path) -> None:
    folder = _write(tmp_path / "new" / "out")
    assert folder == tmp_path / "new" / "out" / "cases" / "generic" / SLUG
    assert (folder / "case.json").is_file() and not (folder / "case.json").is_symlink()
    # the folder is a corpus: made fresh with the first candidate, kept with the next
    out = tmp_path / "new" / "out"
    assert sorted(p.name for p in out.iterdir()) == ["FORMAT", "VERSION", "cases", "manifest.json"]
    second = write_candidate(
        out, draw(random.Random(1), frozenset(CAPABILITIES)), [1], adapter="broken", seed=0,
        example=2, divergence="x: y",
    )  # fmt: skip
    listed = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["files"]
    assert {f"cases/generic/{f.name}/case.json" for f in (folder, second)} <= set(listed)
    assert (out / "VERSION").read_text(encoding="utf-8") == "0.0.0\n"


def _fuzz(capsys: pytest.CaptureFixture[str], out: Path) -> tuple[int, str, str]:
    argv = ["fuzz", "--adapter", str(ADAPTERS / "lf_only.py"), "--seed", "0", "--out", str(out)]
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_refuses_a_non_empty_out_before_fuzzing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    victim = _victim(tmp_path)
    out = tmp_path / "out2"
    link = out / "cases" / "generic" / "fuzz-lf-only-seed0-8" / "case.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(victim)
    code, stdout, err = _fuzz(capsys, out)
    assert victim.read_text(encoding="utf-8") == VICTIM_TEXT
    assert code == 2 and stdout == "", stdout
    assert one_line(err) and str(out) in err and "not empty" in err


def test_cli_refuses_an_out_that_is_a_link(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "elsewhere").mkdir()
    out = tmp_path / "out2"
    out.symlink_to(tmp_path / "elsewhere")
    code, stdout, err = _fuzz(capsys, out)
    assert code == 2 and stdout == ""
    assert one_line(err) and str(out) in err and "link" in err
    assert not any((tmp_path / "elsewhere").iterdir())


@pytest.mark.parametrize("exists", [False, True])
def test_cli_writes_into_a_new_or_empty_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, exists: bool
) -> None:
    out = tmp_path / "out2"
    if exists:
        out.mkdir()
    code, stdout, err = _fuzz(capsys, out)
    assert code == 1, err
    assert one_line(stdout) and "disagreement" in stdout
    (folder,) = (out / "cases" / "generic").iterdir()
    assert (folder / "case.json").is_file()
