"""Hostile numbers, expressions and files: a number out of range, a ``-k`` nested
or long past reason, a JSON document nested past reason, a FIFO where a file
belongs, Ctrl-C. Each is one line on stderr and the documented exit status,
never a traceback (issue 26, items 12 and 15-35)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from streamproof.cli import main
from streamproof.corpus import default_root
from streamproof.corpus.validate import write_manifest
from streamproof.harness.selection import KeywordError, keyword_matcher
from streamproof.harness.strict_json import NotStrictJSON, loads

from .corpus_builder import STREAM, build_corpus, one_line

BASELINE = Path(__file__).parents[2] / "reports" / "baselines" / "reference.json"
USAGE_CASE = "generic/cumulative-usage-on-every-chunk"
WIRE_CASE = "wire/reset-after-finish-before-usage"
DEEP = "[" * 200_000 + "]" * 200_000  # past any recursion limit
DEEPISH = '{"a":' * 300 + "1" + "}" * 300  # parses, then nests past the bound
KEYWORDS = {
    "5000 nots": "not " * 5000 + "usage",
    "5000 parentheses": "(" * 5000 + "usage" + ")" * 5000,
    "a 5000-term or": " or ".join(["usage"] * 5000),
    "100 nots": "not " * 100 + "usage",
    "100 parentheses": "(" * 100 + "usage" + ")" * 100,
}
# A Python file that speaks the protocol (docs/protocol.md): it writes its PID
# to argv[1], then replies REPLY to each run, or hangs when REPLY is None.
PROTOCOL_ADAPTER = """\
import json, os, sys, time
with open(sys.argv[1] + ".part", "w") as file:
    file.write(str(os.getpid()))
os.rename(sys.argv[1] + ".part", sys.argv[1])
for line in sys.stdin:
    message = json.loads(line)
    if message["cmd"] == "start":
        hello = {"name": "hostile", "version": "1", "capabilities": ["content", "usage"]}
        print(json.dumps(hello), flush=True)
    elif message["cmd"] == "run" and REPLY is None:
        time.sleep(600)
    elif message["cmd"] == "run":
        print(REPLY.replace("SEQ", str(message["seq"])), flush=True)
    else:
        break
"""


def _exit_and_stderr(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def _write_adapter(folder: Path, reply: str | None) -> str:
    """A ``cmd:`` adapter replying ``reply`` (``SEQ`` is the run's seq); it writes its PID
    to ``folder / "adapter.pid"``."""
    path = folder / "adapter.py"
    path.write_text(f"REPLY = {reply!r}\n{PROTOCOL_ADAPTER}", encoding="utf-8")
    return f"cmd:{sys.executable} {path} {folder / 'adapter.pid'}"


def _add_case(root: Path, case_id: str) -> None:
    shutil.copytree(default_root() / "cases" / case_id, root / "cases" / case_id)
    write_manifest(root)


def _pytest(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """A pytest session of the plugin alone, in ``tmp_path``."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist"]
    return subprocess.run(
        [*command, "--streamproof", "reference", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_corpus(tmp_path)


# -- 12: a number out of a double's range, from a cmd: adapter -------------


def test_strict_json_refuses_a_number_out_of_range() -> None:
    for text in ('{"a": 1e400}', "[-1E+999]", '{"seconds": 1e400}'):
        with pytest.raises(NotStrictJSON, match="out of the range of a double"):
            loads(text)
    assert loads('{"a": 1e300, "b": 5.0, "c": 12}') == {"a": 1e300, "b": 5.0, "c": 12}


def test_a_reply_with_an_infinite_number_is_a_crash_and_the_results_are_written(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path
) -> None:
    _add_case(root, USAGE_CASE)
    reply = '{"seq": SEQ, "outcome": {"status": "complete", "usage": {"prompt_tokens": 1e400}}}'
    spec = _write_adapter(tmp_path, reply)
    out = tmp_path / "results.json"
    argv = ["run", "--adapter", spec, "--corpus", root, "--case", USAGE_CASE]
    code, err = _exit_and_stderr(capsys, *argv, "--transport", "whole", "--json", out, "--no-html")
    assert code == 1 and "Traceback" not in err
    document = loads(out.read_text(encoding="utf-8"))  # written, and strict JSON
    [row] = document["results"]
    assert row["verdict"] == "crash" and "1e400" in row["message"], row


# -- 15: --jobs has a maximum ----------------------------------------------


@pytest.mark.parametrize("jobs", ["0", "65", "400", "100000"])
def test_run_refuses_jobs_beyond_the_maximum(
    capsys: pytest.CaptureFixture[str], root: Path, jobs: str
) -> None:
    code, err = _exit_and_stderr(capsys, "run", "--corpus", root, "--jobs", jobs)
    assert code == 2 and one_line(err)
    assert f"--jobs must be at least 1 and at most 64, not {jobs}" in err
    assert capsys.readouterr().out == ""  # nothing ran


def test_the_jobs_maximum_is_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "at most 64" in " ".join(capsys.readouterr().out.split())


def test_the_plugin_refuses_jobs_beyond_the_maximum(root: Path, tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--streamproof-corpus", str(root), "--streamproof-jobs", "400")
    assert done.returncode == 4, done.stdout + done.stderr
    assert (
        "streamproof: --streamproof-jobs must be at least 1 and at most 64, not 400" in done.stderr
    )
    assert "INTERNALERROR" not in done.stdout + done.stderr


# -- 16: --timeout has a maximum -------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "--transport", "whole", "--no-html"),
        ("check-adapter", "reference"),
        ("fuzz", "--max-examples", "1"),
        ("scaling", "--dimension", "reads", "--quick", "--no-throughput"),
    ],
    ids=lambda argv: argv[0],
)
@pytest.mark.parametrize("timeout", ["1e10", "86401", "1e400", "nan", "0"])
def test_a_timeout_out_of_range_exits_2_in_one_line(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: tuple[str, ...],
    timeout: str,
) -> None:
    monkeypatch.chdir(tmp_path)  # fuzz would write its candidates here
    extra = ["--corpus", root] if argv[0] == "run" else []
    code, err = _exit_and_stderr(capsys, *argv, *extra, "--timeout", timeout)
    assert code == 2 and one_line(err), err
    assert "--timeout must be a positive, finite number of seconds, at most 86400" in err
    assert capsys.readouterr().out == ""  # nothing ran


def test_the_plugin_refuses_a_timeout_out_of_range(root: Path, tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--streamproof-corpus", str(root), "--streamproof-timeout", "1e10")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "--streamproof-timeout must be a positive, finite number of seconds" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout and "INTERNALERROR" not in done.stdout


# -- 17: a -k expression nested or long past reason -----------------------


@pytest.mark.parametrize("expression", list(KEYWORDS.values()), ids=list(KEYWORDS))
def test_a_keyword_too_deep_or_too_long_is_a_keyword_error(expression: str) -> None:
    with pytest.raises(KeywordError, match=r"nests deeper than 32 levels|longer than 512 words"):
        keyword_matcher(expression)


def test_a_keyword_within_the_bounds_still_matches() -> None:
    deep = "not " * 31 + "usage"  # 31 nots: the word, then 31 levels
    assert keyword_matcher(deep)("usage") is False
    assert keyword_matcher("(" * 31 + "usage" + ")" * 31)("usage")
    assert keyword_matcher(" or ".join(["nothing"] * 255 + ["usage"]))("usage")


@pytest.mark.parametrize("expression", list(KEYWORDS.values()), ids=list(KEYWORDS))
def test_run_refuses_a_keyword_too_deep_or_too_long(
    capsys: pytest.CaptureFixture[str], root: Path, expression: str
) -> None:
    code, err = _exit_and_stderr(capsys, "run", "--corpus", root, "-k", expression)
    assert code == 2 and one_line(err) and "-k " in err


def test_the_plugin_refuses_a_keyword_too_deep(root: Path, tmp_path: Path) -> None:
    expression = KEYWORDS["100 nots"]
    done = _pytest(tmp_path, "--streamproof-corpus", str(root), "--streamproof-keyword", expression)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "nests deeper than 32 levels" in done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr


# -- 18: a JSON document nested past reason --------------------------------


def _reads_deep_json(tmp_path: Path, root: Path, text: str) -> dict[str, tuple[str | Path, ...]]:
    deep = tmp_path / "deep.json"
    deep.write_text(text, encoding="utf-8")
    return {
        "verify": ("verify", deep, "--corpus", root),
        "diff": ("diff", BASELINE, deep, "--corpus", root),
        "report": ("report", deep, "--corpus", root, "--output", tmp_path / "m.html"),
        "report --scaling": (
            *("report", BASELINE, "--scaling", deep),
            *("--corpus", root, "--output", tmp_path / "m.html"),
        ),
        "run --expect": ("run", "--corpus", root, "--expect", deep, "--no-html"),
    }


@pytest.mark.parametrize("text", [DEEP, DEEPISH], ids=["200000 deep", "300 deep"])
@pytest.mark.parametrize(
    "command", ["verify", "diff", "report", "report --scaling", "run --expect"]
)
def test_a_deep_json_document_is_one_line(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path, command: str, text: str
) -> None:
    argv = _reads_deep_json(tmp_path, root, text)[command]
    code, err = _exit_and_stderr(capsys, *argv)
    deep = str(tmp_path / "deep.json")
    named = [line for line in err.splitlines() if deep in line and "nested deeper than" in line]
    assert len(named) == 1 and "Traceback" not in err, err[-2000:]
    # verify says "not verified" (exit 1), as for any file that is not JSON; the others exit 2
    assert code == (1 if command == "verify" else 2)
    if command != "verify":
        assert one_line(err)
    assert not (tmp_path / "m.html").exists()


# -- 23: a bound on file size that is no number ----------------------------


@pytest.mark.parametrize("value", ["²", "١٢", "12a", "0", "-5"])
@pytest.mark.parametrize("command", ["list", "validate"])
def test_a_file_size_bound_that_is_no_number_exits_2(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    value: str,
) -> None:
    monkeypatch.setenv("STREAMPROOF_MAX_FILE_BYTES", value)
    code, err = _exit_and_stderr(capsys, command, "--corpus", root)
    assert code == 2 and "Traceback" not in err
    lines = [line for line in err.splitlines() if "$STREAMPROOF_MAX_FILE_BYTES" in line]
    assert len(lines) == 1 and "not a positive number of bytes" in lines[0]


# -- 27: an integer field written as a float --------------------------------


@pytest.mark.parametrize(
    ("case_id", "where", "value"),
    [
        (WIRE_CASE, ("fault", "after_byte"), "5.0"),
        (WIRE_CASE, ("fault", "after_byte"), "1e3"),
        (STREAM, ("response", "status"), "2E2"),
    ],
)
def test_an_integer_written_as_a_float_is_refused(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    case_id: str,
    where: tuple[str, str],
    value: str,
) -> None:
    if case_id == WIRE_CASE:
        _add_case(root, WIRE_CASE)
    case_json = root / "cases" / case_id / "case.json"
    data = json.loads(case_json.read_text(encoding="utf-8"))
    data[where[0]][where[1]] = "@NUMBER@"
    case_json.write_text(json.dumps(data).replace('"@NUMBER@"', value), encoding="utf-8")
    write_manifest(root)
    code, err = _exit_and_stderr(capsys, "validate", "--corpus", root)
    problem = [line for line in err.splitlines() if str(case_json) in line]
    assert code == 2 and len(problem) == 1, err
    assert f"{'.'.join(where)} is {float(value)!r}, not an integer" in problem[0]


# -- 30: a -k matching nothing names the -k ---------------------------------


def test_a_keyword_matching_nothing_blames_the_keyword(
    capsys: pytest.CaptureFixture[str], root: Path
) -> None:
    code, err = _exit_and_stderr(capsys, "run", "--corpus", root, "-k", "nosuchword")
    assert code == 2 and one_line(err)
    assert "-k 'nosuchword' matches no case run" in err and "transport" not in err
    # the transport is still blamed where it is the cause
    code, err = _exit_and_stderr(
        capsys, "run", "--corpus", root, "-k", "lines", "--transport", "whole"
    )
    assert code == 2 and "no selected case runs under --transport whole" in err


# -- 34: a results file with a number out of range --------------------------


def test_verify_refuses_seconds_out_of_range(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path
) -> None:
    path = tmp_path / "results.json"
    argv = ["run", "--corpus", root, "--transport", "whole", "--json", path, "--no-html"]
    assert main([str(a) for a in argv]) == 0
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition('"seconds": ')
    path.write_text(head + '"seconds": 1e400' + rest[rest.index(",") :], encoding="utf-8")
    capsys.readouterr()
    code, err = _exit_and_stderr(capsys, "verify", path, "--corpus", root)
    assert code == 1 and "Traceback" not in err
    assert f"{path}: not valid JSON: 1e400 is out of the range of a double" in err


# -- 35: a FIFO where a results file belongs --------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
@pytest.mark.parametrize(
    "command", ["verify", "diff", "report", "report --scaling", "run --expect"]
)
def test_a_fifo_given_as_a_document_is_refused_without_waiting(
    root: Path, tmp_path: Path, command: str
) -> None:
    argv = _reads_deep_json(tmp_path, root, "{}")[command]
    fifo = tmp_path / "deep.json"
    fifo.unlink()
    os.mkfifo(fifo)
    done = subprocess.run(  # no writer ever comes: a read would wait for ever
        [sys.executable, "-m", "streamproof", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and one_line(done.stderr), done.stderr
    assert str(fifo) in done.stderr and "a FIFO, not a regular file" in done.stderr


# -- 24: Ctrl-C ------------------------------------------------------------


def _wait_for(condition: Callable[[], bool], seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        time.sleep(0.05)
    return condition()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie no longer does)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize(
    "argv",
    [
        ("fuzz", "--seconds", "600", "--out", "candidates"),
        ("scaling", "--dimension", "reads", "--sizes", "1000,2000,4000", "--no-throughput"),
    ],
    ids=lambda argv: argv[0],
)
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path, argv: tuple[str, ...]) -> None:
    # the adapter hangs on its first case, so the command is surely still running
    spec = _write_adapter(tmp_path, None)
    pid_file = tmp_path / "adapter.pid"
    command = [sys.executable, "-m", "streamproof", *argv, "--adapter", spec, "--timeout", "600"]
    proc = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert _wait_for(pid_file.exists), "the adapter never started"
        adapter = int(pid_file.read_text())
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.strip() == "streamproof: interrupted; nothing more was written"
    assert _wait_for(lambda: not _alive(adapter)), "the adapter outlived the command"


def test_ctrl_c_during_verify_is_one_line_and_exit_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object) -> list[str]:
        raise KeyboardInterrupt

    monkeypatch.setattr("streamproof.cli.verify.verify", interrupted)
    code, err = _exit_and_stderr(capsys, "verify", BASELINE)
    assert code == 130 and err.strip() == "streamproof: interrupted; nothing more was written"
