"""What a Python adapter imports from: a user's file as ``python file.py`` would.

A user's adapter file gets its own folder first on ``sys.path`` in every
command (``run``, ``debug``, ``check-adapter``, ``fuzz``, ``scaling``, the
plugin) from any working folder; a module spec gets the working folder, as
``python -m`` would; a built-in adapter gets neither, so ``adapters/`` never
shadows the library an adapter drives. See docs/protocol.md.
"""

from __future__ import annotations

import html
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hostile.corpus_builder import STREAM, build_corpus, one_line

from streamproof.resources import data_path

# A user's parser package beside the adapter: the reference parser under another name.
TINYCHAT = """\
from streamproof.adapter import load_adapter

VERSION = "3.0"
_reference = load_adapter("reference")


def read(response):
    return _reference.run(response)
"""

# A correct adapter for it, importing its parser as ``python my_adapter.py`` would.
RIGHT = """\
import tinychat3

NAME = "tinychat3"
VERSION = tinychat3.VERSION


def parse(response):
    return tinychat3.read(response)
"""

# An adapter that fails every case it reads text from, and imports a sibling
# lazily, inside parse: the folder stays on the path after the load.
SHOUTING = """\
import tinychat3

NAME = "tinychat3-shouting"
VERSION = tinychat3.VERSION


def parse(response):
    import shout

    return shout.louder(tinychat3.read(response))
"""

SHOUT = """\
def louder(outcome):
    for choice in outcome["choices"]:
        choice["content"] = choice["content"].upper()
    return outcome
"""


# The command as a user types it (and as the report prints it), not ``python -m
# streamproof``, which would put the working folder on the path of its own accord.
STREAMPROOF = Path(sys.executable).with_name("streamproof")


def _streamproof(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [STREAMPROOF, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=180,
        check=False,
    )


@pytest.fixture
def beside(tmp_path: Path) -> Path:
    """A folder holding adapters that import modules beside them, and a corpus."""
    folder = tmp_path / "adapter-dir"
    folder.mkdir()
    (folder / "tinychat3.py").write_text(TINYCHAT)
    (folder / "my_adapter.py").write_text(RIGHT)
    (folder / "shouting_adapter.py").write_text(SHOUTING)
    (folder / "shout.py").write_text(SHOUT)
    (tmp_path / "elsewhere").mkdir()
    build_corpus(tmp_path)
    return folder


def _where(beside: Path, place: str) -> tuple[Path, str]:
    """The working folder and the adapter folder as a user there would name it."""
    if place == "adapter folder":
        return beside, "."
    return beside.parent / "elsewhere", "../adapter-dir"


def _repro_lines(report: Path) -> list[str]:
    """Every command line the HTML report prints to rerun a failure."""
    blocks = re.findall(r'<pre class="repro">(.*?)</pre>', report.read_text(), re.S)
    return [html.unescape(line) for block in blocks for line in block.splitlines() if line]


@pytest.mark.parametrize("place", ["adapter folder", "another folder"])
def test_the_reports_repro_lines_run_as_printed(beside: Path, place: str) -> None:
    cwd, folder = _where(beside, place)
    corpus = beside.parent / "corpus"
    args = ["--corpus", corpus, "--case", STREAM, "--transport", "whole"]
    right = _streamproof("run", "--adapter", f"{folder}/my_adapter.py", *args, cwd=cwd)
    assert right.returncode == 0, right.stdout + right.stderr
    assert "tinychat3 3.0" in right.stdout and "1 passed, 0 failed" in right.stdout

    report = cwd / "report.html"
    spec = f"{folder}/shouting_adapter.py"
    run = _streamproof("run", "--adapter", spec, *args, "--html", report, cwd=cwd)
    assert run.returncode == 1, run.stdout + run.stderr
    lines = _repro_lines(report)
    assert [line.split()[1] for line in lines] == ["debug", "run"], lines
    for line in lines:
        word, *rest = shlex.split(line)
        assert word == "streamproof" and spec in rest
        # A private corpus is named (absolute): the same bytes from any folder.
        assert rest[rest.index("--corpus") + 1] == str(corpus.resolve()), line
        again = _streamproof(*rest, cwd=cwd)
        # It reproduces the failure: it ran the adapter and got the same divergence.
        assert again.returncode == 1, line + "\n" + again.stdout + again.stderr
        assert "cannot import" not in again.stderr
        assert "choices[0].content: want 'Yes, it does" in again.stdout, again.stdout


@pytest.mark.parametrize("place", ["adapter folder", "another folder"])
def test_check_adapter_loads_a_sibling_module(beside: Path, place: str) -> None:
    cwd, folder = _where(beside, place)
    done = _streamproof("check-adapter", f"{folder}/my_adapter.py", "--timeout", "5", cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "required behaviours hold" in done.stdout


def test_fuzz_and_scaling_load_a_sibling_module_from_another_folder(beside: Path) -> None:
    cwd, folder = _where(beside, "another folder")
    fuzz = _streamproof(
        "fuzz", "--adapter", f"{folder}/my_adapter.py", "--max-examples", "5", cwd=cwd
    )
    assert fuzz.returncode == 0, fuzz.stdout + fuzz.stderr
    assert "no disagreement in 5 example(s)" in fuzz.stdout
    scaling = _streamproof(
        "scaling",
        "--adapter",
        f"{folder}/my_adapter.py",
        *("--dimension", "events", "--sizes", "50,100", "--repeat", "1", "--no-throughput"),
        cwd=cwd,
    )
    assert scaling.returncode == 0, scaling.stdout + scaling.stderr
    assert "tinychat3 3.0" in scaling.stdout


def test_the_plugin_loads_a_sibling_module_from_another_folder(
    beside: Path, pytester: pytest.Pytester
) -> None:
    adapter = pytester.path / "adapters-of-mine"
    adapter.mkdir()
    for name in ("tinychat3.py", "my_adapter.py"):
        (adapter / name).write_text((beside / name).read_text())
    result = pytester.runpytest(
        "--streamproof=adapters-of-mine/my_adapter.py",
        f"--streamproof-corpus={beside.parent / 'corpus'}",
        f"--streamproof-case={STREAM}",
        "--streamproof-transport=whole",
    )
    result.assert_outcomes(passed=1)


def test_a_missing_module_names_the_folders_searched(beside: Path) -> None:
    # The working folder holds the module, but a file adapter imports as
    # ``python file.py`` would: its own folder first, the working folder not at all.
    cwd, folder = _where(beside, "another folder")
    (cwd / "tinychat4.py").write_text("")
    (beside / "needs_four.py").write_text("import tinychat4\n\ndef parse(response):\n    pass\n")
    spec = f"{folder}/needs_four.py"
    for args in (("run", "--adapter", spec), ("debug", STREAM, "--adapter", spec)):
        done = _streamproof(*args, cwd=cwd)
        assert done.returncode == 2, done.stdout + done.stderr
        assert one_line(done.stderr), done.stderr
        assert f"{spec}: cannot import: No module named 'tinychat4'" in done.stderr
        searched = done.stderr.split("(searched ", 1)[1]
        assert searched.startswith(f"{beside}, ") and "more on sys.path)" in searched


def test_a_module_spec_imports_from_the_working_folder(tmp_path: Path) -> None:
    package = tmp_path / "mine"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "parser.py").write_text(TINYCHAT)
    (package / "adapter.py").write_text(
        RIGHT.replace("import tinychat3", "from mine import parser as tinychat3")
    )
    # As ``python -m mine.adapter`` would, in this process (debug) and in the worker (run).
    done = _streamproof("debug", STREAM, "--adapter", "mine.adapter", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "with tinychat3 3.0" in done.stdout
    args = ("--case", STREAM, "--transport", "whole")
    run = _streamproof("run", "--adapter", "mine.adapter", *args, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "tinychat3 3.0" in run.stdout and "1 passed, 0 failed" in run.stdout


def test_a_builtin_adapter_gets_nothing_on_the_path() -> None:
    script = (
        "import sys\n"
        "from streamproof.adapter import load_adapter\n"
        "from streamproof.resources import data_path\n"
        "before = list(sys.path)\n"
        "load_adapter('reference')\n"
        "load_adapter(str(data_path('adapters') / 'reference.py'))\n"
        "print(sys.path == before)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.strip() == "True", done.stdout + done.stderr


@pytest.mark.parametrize("spec", ["httpx-sse", "path"])
def test_a_builtin_adapter_is_shadowed_neither_by_adapters_nor_the_working_folder(
    tmp_path: Path, spec: str
) -> None:
    # adapters/httpx_sse.py first on the path would import itself for httpx_sse,
    # and a decoy in the working folder would take its place through the worker.
    (tmp_path / "httpx_sse.py").write_text("raise ImportError('the decoy was imported')\n")
    if spec == "path":
        spec = str(data_path("adapters") / "httpx_sse.py")
    done = _streamproof(
        "run", "--adapter", spec, "--case", STREAM, "--transport", "whole", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 0 failed" in done.stdout
