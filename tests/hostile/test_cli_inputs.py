"""Hostile command lines and files: one line and exit 2 before any case runs;
text from results files, adapters and cases reaches the terminal escaped."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from streamproof.cli import main
from streamproof.corpus import load_corpus
from streamproof.harness.engine import Result, Verdict
from streamproof.harness.transports import parse_transports
from streamproof.reporting.terminal import print_summary
from streamproof.reporting.wire import terminal_safe

from .corpus_builder import STREAM, build_corpus, one_line

BASELINE = Path(__file__).parents[2] / "reports" / "baselines" / "reference.json"
# Retitles the terminal window, then clears the screen (ECMA-48 OSC and CSI).
INJECTED = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202eevil"


def _exit_and_stderr(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_corpus(tmp_path)


@pytest.mark.parametrize("manifest", ["[]", "null", '{"files": "abc"}', '{"retired": 5}'])
@pytest.mark.parametrize("command", ["validate", "manifest"])
def test_a_manifest_of_the_wrong_shape_exits_2_in_one_line(
    capsys: pytest.CaptureFixture[str], root: Path, manifest: str, command: str
) -> None:
    (root / "manifest.json").write_text(manifest, encoding="utf-8")
    code, err = _exit_and_stderr(capsys, command, "--corpus", root)
    assert code == 2
    lines = [line for line in err.splitlines() if "manifest.json" in line]
    assert len(lines) == 1 and "Traceback" not in err


@pytest.mark.parametrize("name", ["VERSION", "README.md"])
def test_version_or_readme_not_utf8_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    root = build_corpus(tmp_path, quirks=True)
    (root / name).write_bytes(b"\xff\xfe1.0\n")
    code, err = _exit_and_stderr(capsys, "validate", "--corpus", root)
    assert code == 2
    assert f"{root / name}: not UTF-8" in err and "Traceback" not in err


def test_a_deep_case_exits_2(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    case_json = root / "cases" / STREAM / "case.json"
    case_json.write_text("[" * 1000 + "]" * 1000, encoding="utf-8")
    for command in ("validate", "run", "list"):
        code, err = _exit_and_stderr(capsys, command, "--corpus", root)
        problem = [line for line in err.splitlines() if str(case_json) in line]
        assert code == 2 and "Traceback" not in err, command
        assert len(problem) == 1 and "nested deeper than 64 levels" in problem[0], command


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--adapter", "cmd:python3 'unterminated"), "the command does not split"),
        (("--adapter", "cmd:   "), "no command after 'cmd:'"),
        (("--timeout", "nan"), "--timeout must be a positive, finite number"),
        (("--timeout", "inf"), "--timeout must be a positive, finite number"),
        (("--timeout", "-1"), "--timeout must be a positive, finite number"),
    ],
)
def test_bad_run_arguments_exit_2_in_one_line(
    capsys: pytest.CaptureFixture[str], root: Path, argv: tuple[str, ...], said: str
) -> None:
    code, err = _exit_and_stderr(capsys, "run", "--corpus", root, *argv)
    assert code == 2 and said in err and one_line(err)


@pytest.mark.parametrize("option", ["--json", "--html", "--junit", "--baseline", "--write-expect"])
def test_an_output_into_a_missing_folder_fails_before_the_run(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path, option: str
) -> None:
    target = tmp_path / "no" / "such" / "out.file"
    code, err = _exit_and_stderr(capsys, "run", "--corpus", root, option, target)
    assert code == 2 and one_line(err)
    assert f"the folder {str(target.parent)!r} does not exist" in err
    code, err = _exit_and_stderr(capsys, "run", "--corpus", root, option, tmp_path)
    assert code == 2 and "is a folder, not a file" in err
    assert capsys.readouterr().out == ""  # nothing ran


def test_a_transport_given_twice_is_one_transport() -> None:
    assert parse_transports("whole,whole") == ["whole"]
    assert parse_transports("bytes, whole,bytes,lines,whole") == ["bytes", "whole", "lines"]


def test_terminal_safe_escapes_every_control_character() -> None:
    assert terminal_safe(INJECTED) == "\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202eevil"
    assert terminal_safe("a\nb\tc\rd\0") == "a\\nb\\tc\\rd\\0"
    assert terminal_safe("plain, é, 日本") == "plain, é, 日本"


def test_run_prints_crash_messages_and_adapter_names_escaped(root: Path) -> None:
    case = load_corpus(root).cases[0]
    crash = Result(case, "whole", Verdict.CRASH, message=f"RuntimeError: {INJECTED}")
    out = io.StringIO()
    print_summary([crash], f"adapter{INJECTED} 1.0", "1.0.1", out)
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "\\x1b]0;owned\\x07" in text
    # the crash, the summary, the coverage line, one line per profile (text, readme, full)
    assert len(text.splitlines()) == 6


def test_diff_prints_results_file_text_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old = json.loads(BASELINE.read_text(encoding="utf-8"))
    new = json.loads(json.dumps(old))
    new["adapter"]["name"] = f"reference{INJECTED}"
    new["results"][0].update(verdict="crash", first_divergence=f"boom {INJECTED}\nPASS forged")
    (tmp_path / "old.json").write_text(json.dumps(old), encoding="utf-8")
    (tmp_path / "new.json").write_text(json.dumps(new), encoding="utf-8")
    code = main(["diff", str(tmp_path / "old.json"), str(tmp_path / "new.json")])
    out = capsys.readouterr().out
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[2J" in out
    assert not any(line.startswith("PASS") for line in out.splitlines())


def test_verify_prints_results_file_text_escaped(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path
) -> None:
    path = tmp_path / "results.json"
    argv = ["run", "--adapter", "reference", "--transport", "whole", "--json", str(path)]
    assert main([*argv, "--corpus", str(root)]) == 0
    document = json.loads(path.read_text(encoding="utf-8"))
    document["adapter"]["name"] = f"reference{INJECTED}"
    document["results"][0]["case"] = f"generic/{INJECTED}"
    path.write_text(json.dumps(document), encoding="utf-8")
    capsys.readouterr()
    assert main(["verify", str(path), "--corpus", str(root)]) == 1
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "\x1b" not in text and "\x07" not in text
    assert "generic/\\x1b]0;owned" in text  # shown, escaped


def test_corpus_problems_are_printed_escaped(
    capsys: pytest.CaptureFixture[str], root: Path
) -> None:
    folder = root / "cases" / "generic" / f"x{INJECTED}"
    folder.mkdir()
    os.symlink("/etc/passwd", folder / "case.json")
    for command in ("validate", "run", "serve"):
        code, err = _exit_and_stderr(capsys, command, "--corpus", root)
        assert code == 2, command
        assert "\x1b" not in err and "symbolic link" in err, command


@pytest.mark.parametrize("manifest", ["[]", '{"retired": 5}', '{"retired": {"a": 1}}'])
def test_diff_with_a_manifest_of_the_wrong_shape_exits_2(
    capsys: pytest.CaptureFixture[str], root: Path, manifest: str
) -> None:
    (root / "manifest.json").write_text(manifest, encoding="utf-8")
    document = json.loads(BASELINE.read_text(encoding="utf-8"))
    gone = document["results"][0]["case"]  # a case gone: diff reads the retired list
    document["results"] = [r for r in document["results"] if r["case"] != gone]
    new = root.parent / "new.json"
    new.write_text(json.dumps(document), encoding="utf-8")
    code, err = _exit_and_stderr(capsys, "diff", BASELINE, new, "--corpus", root)
    assert code == 2 and f"{root / 'manifest.json'}: " in err and one_line(err)
