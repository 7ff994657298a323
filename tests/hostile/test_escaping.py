"""Text from a corpus, an adapter spec or the environment is shown, never acted on.

On a terminal (``list``, ``show``, ``debug``, ``validate``, ``review``) every
control character, C1 control and bidirectional override is escaped; in the
pytest-html report no value runs as script, checked in a browser with
JavaScript on; a ``case.json`` that states a key twice is refused.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser import MISSING, Browser

from streamproof.cli import main
from streamproof.corpus import default_root
from streamproof.corpus.validate import write_manifest
from streamproof.reporting.fragments import environment_html
from streamproof.reporting.wire import terminal_safe, visible

from .corpus_builder import STREAM, build_corpus

# Retitles the window, rings the bell, then a C1 CSI, a NUL and a right-to-left override.
INJECTED = "\x1b]0;owned\x07\x9b31m\x00\u202eevil"
# An OSC 52 clipboard write: the terminal would put "evil" on the clipboard.
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"


def raw_controls(text: str) -> set[str]:
    """The characters of ``text`` a terminal would act on rather than show."""
    return {
        ch
        for ch in text
        if (ord(ch) < 0x20 and ch != "\n")
        or 0x7F <= ord(ch) < 0xA0
        or 0x202A <= ord(ch) <= 0x202E
        or 0x2066 <= ord(ch) <= 0x2069
    }


def _hostile_case(root: Path) -> None:
    """The stream case, its title, comment, source, a header, body and content spoiled."""
    folder = root / "cases" / STREAM
    data = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    data["title"] = f"text split per token {INJECTED}"
    data["comment"] = f"a comment {INJECTED}"
    data["provenance"]["source"] = f"https://example.com/{INJECTED}"
    data["response"]["headers"]["x-note"] = "\u202e\x9b31m"  # no C0 control: a server may send it
    data["expected"]["choices"][0]["content"] = data["expected"]["choices"][0]["content"].replace(
        "Yes", "Y\u202ees\x9b"
    )
    (folder / "case.json").write_text(json.dumps(data), encoding="utf-8")
    body = (folder / "response.sse").read_bytes()
    spoiled = body.replace(b'"content":"Yes"', '"content":"Y\u202ees\x9b"'.encode(), 1)
    (folder / "response.sse").write_bytes(f": {INJECTED}\n\n".encode() + spoiled)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = build_corpus(tmp_path)
    _hostile_case(root)
    (root / "VERSION").write_text(f"1.5.0{INJECTED}\n", encoding="utf-8")
    write_manifest(root)
    return root


def _output(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_terminal_safe_and_visible_escape_c1_controls_and_bidi_overrides() -> None:
    unsafe = "\x1b\x07\x00\x7f\x85\x9b\u202a\u202e\u2066\u2069"
    assert raw_controls(terminal_safe(unsafe)) == set()
    assert terminal_safe("\x9b\u202e") == "\\x9b\\u202e"
    assert visible("a\x9b\u202eb\u2067\n".encode()) == "a\\x9b\\u202eb\\u2067\\n\n"
    assert visible("plain, é, 日本\r\n".encode()) == "plain, é, 日本\\r\\n\n"


@pytest.mark.parametrize(
    "command",
    [
        ("validate",),
        ("list",),
        ("show", STREAM),
        ("show", STREAM, "--transport", "lines"),
        ("debug", STREAM, "--adapter", "reference"),
    ],
)
def test_corpus_text_reaches_the_terminal_escaped(
    capsys: pytest.CaptureFixture[str], root: Path, command: tuple[str, ...]
) -> None:
    code, text = _output(capsys, *command, "--corpus", root)
    assert code == 0, text
    assert raw_controls(text) == set(), command
    assert "\\x1b]0;owned\\x07\\x9b31m\\0\\u202eevil" in text  # the VERSION, the title or the body


def test_show_escapes_the_title_comment_source_headers_and_body(
    capsys: pytest.CaptureFixture[str], root: Path
) -> None:
    code, text = _output(capsys, "show", STREAM, "--corpus", root)
    assert code == 0
    escaped = terminal_safe(INJECTED)
    for shown in (
        f"text split per token {escaped}",
        f"a comment {escaped}",
        f"https://example.com/{escaped}",
        "x-note: \\u202e\\x9b31m",
        f": {escaped}",  # the SSE comment line of the body
        '"Y\\u202ees\\x9b"',  # in the body and in the expectation
    ):
        assert shown in text, shown


def test_debug_escapes_the_adapter_outcome(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    code, text = _output(capsys, "debug", STREAM, "--adapter", "reference", "--corpus", root)
    assert code == 0, text
    assert '"content": "Y\\u202ees\\x9b, it does' in text and raw_controls(text) == set()


def _recorded(root: Path) -> Path:
    """The stream case as a stranger's recording: endpoint and header values hostile."""
    folder = root / "cases" / STREAM
    data = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    data["provenance"] = {
        "kind": "recorded",
        "source": f"recorded {CLIPBOARD}",
        "observed": "2026-11",
        "recorded_at": f"2026-11-01T00:00:00Z{INJECTED}",
        "endpoint": f"https://api.example.com/{CLIPBOARD}",
        "reviewed_by": f"someone{INJECTED}",
    }
    data["response"]["headers"]["x-clipboard"] = CLIPBOARD
    data["request"]["messages"][0]["content"] = f"hi {INJECTED}"
    data["expected"][f"odd{INJECTED}"] = f"field {CLIPBOARD}"
    (folder / "case.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


@pytest.mark.parametrize("answers", ["", "y\n" * 12 + "q\n"])
def test_review_of_a_strangers_recording_prints_it_escaped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, root: Path, answers: str
) -> None:
    folder = _recorded(root)
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    code, text = _output(capsys, "review", folder, "--reviewer", "me")
    assert code == 1, text  # stopped: stdin ended, or q
    assert raw_controls(text) == set()
    for shown in (
        "x-clipboard: \\x1b]52;c;ZXZpbA==\\x07",  # the OSC 52 clipboard write, as text
        "https://api.example.com/\\x1b]52;c;ZXZpbA==\\x07",
        f"text split per token {terminal_safe(INJECTED)}",
        f"already reviewed by someone{terminal_safe(INJECTED)}",
    ):
        assert shown in text, shown


# -- a key stated twice ---------------------------------------------------------------


def _state_twice(root: Path) -> Path:
    """``case.json`` with a fake ``expected`` first, the real one last."""
    case_json = root / "cases" / STREAM / "case.json"
    text = case_json.read_text(encoding="utf-8")
    fake = '{"status": "complete", "choices": []}'
    case_json.write_text(text.replace('"expected":', f'"expected": {fake},\n  "expected":', 1))
    return case_json


@pytest.mark.parametrize("command", ["validate", "list", "run"])
def test_a_key_stated_twice_makes_the_case_invalid(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: str,
) -> None:
    monkeypatch.chdir(tmp_path)  # (a run that went ahead would write its report here)
    root = build_corpus(tmp_path)
    case_json = _state_twice(root)
    write_manifest(root)
    code, text = _output(capsys, command, "--corpus", root)
    assert code == 2, text
    (line,) = [line for line in text.splitlines() if str(case_json) in line]
    assert "'expected' twice" in line and "Traceback" not in text


def test_a_key_stated_twice_in_a_nested_object_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = build_corpus(tmp_path)
    case_json = root / "cases" / STREAM / "case.json"
    text = case_json.read_text(encoding="utf-8")
    case_json.write_text(text.replace('"status": 200,', '"status": 200, "status": 500,', 1))
    write_manifest(root)
    code, out = _output(capsys, "validate", "--corpus", root)
    assert code == 2 and f"{case_json}: key 'status' twice in one object" in out


def test_a_body_may_repeat_a_key(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A body is what a server sent: the cases read it as the parsers under test do."""
    root = build_corpus(tmp_path)
    body = root / "cases" / STREAM / "response.sse"
    body.write_bytes(body.read_bytes().replace(b'{"id":', b'{"id":"x","id":', 1))
    write_manifest(root)
    code, out = _output(capsys, "validate", "--corpus", root)
    assert code == 0, out


# -- the HTML report ------------------------------------------------------------------

# Each sets its own flag when it runs; none may.
VERSION_SCRIPT = "<img src=x onerror=window.pwned_version=1>"
SPEC_SCRIPT = "<img src=x onerror=window.pwned_spec=1>"
ENV_SCRIPT = "<img src=x onerror=window.pwned_env=1>"
# The issue's own form (its slashes make the rest the value of src), and an SVG that runs at once.
ENV_SCRIPTS = {
    "CI_COMMIT_REF_NAME": ENV_SCRIPT,
    "CI_COMMIT_TAG": "<img/src=x/onerror=window.pwned_tag=1>",
    "CI_JOB_NAME": "<svg onload=window.pwned_job=1>",
}
FLAGS = ["pwned_version", "pwned_spec", "pwned_env", "pwned_tag", "pwned_job"]
ROOT = Path(__file__).resolve().parents[2]


def test_the_environment_table_gets_every_value_escaped() -> None:
    environment = {
        "Python": "3.11",
        "count": 3,
        "none": None,
        "CI_COMMIT_REF_NAME": ENV_SCRIPT,
        "Plugins": {"html": "4.2.0", SPEC_SCRIPT: VERSION_SCRIPT, "deep": {"a": ENV_SCRIPT}},
        "list": [ENV_SCRIPT, 1],
    }
    shown = environment_html(environment)
    assert "<" not in json.dumps(shown)
    assert shown["CI_COMMIT_REF_NAME"] == "&lt;img src=x onerror=window.pwned_env=1&gt;"
    assert shown["Python"] == "3.11" and shown["count"] == 3 and shown["none"] is None
    assert shown["Plugins"]["html"] == "4.2.0"
    assert environment["CI_COMMIT_REF_NAME"] == ENV_SCRIPT  # the metadata itself is left as is


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of a run on a corpus whose VERSION, the adapter's path and a CI
    variable collected by pytest-metadata each carry a script."""
    folder = tmp_path_factory.mktemp("hostile-report")
    root = build_corpus(folder)
    (root / "VERSION").write_text(f"1.5.0{VERSION_SCRIPT}\n", encoding="utf-8")
    write_manifest(root)
    adapter = folder / SPEC_SCRIPT / "adapter.py"
    adapter.parent.mkdir()
    adapter.write_bytes((ROOT / "tests" / "adapters" / "naive_lines.py").read_bytes())
    out = folder / "report.html"
    env = {**os.environ, **ENV_SCRIPTS, "GITLAB_CI": "true"}
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "streamproof", "run", "--adapter", str(adapter)),
            *("--corpus", str(root), "--transport", "whole,lines", "--html", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert proc.returncode in (0, 1) and out.is_file(), proc.stdout + proc.stderr
    return out


def test_no_value_of_the_report_runs_as_script(hostile_report: Path, tmp_path: Path) -> None:
    if MISSING is not None:
        pytest.skip(MISSING)
    page = Browser(tmp_path)
    try:
        page.open(hostile_report.as_uri())
        rows = "return document.querySelectorAll('#environment tr').length"
        deadline = time.monotonic() + 10
        while not page.run(rows) and time.monotonic() < deadline:
            time.sleep(0.1)  # the table is built by the page's script: polled to a deadline
        shown = page.run(
            "return {env: document.getElementById('environment').innerText,"
            " handlers: document.querySelectorAll('[onerror]').length,"
            " images: [...document.images].filter(i => i.src.endsWith('/x')).length,"
            " rows: document.querySelectorAll('tbody.results-table-row').length,"
            " text: document.body.innerText,"
            " flags: arguments[0].filter(f => window[f] !== undefined)}",
            FLAGS,
        )
    finally:
        page.close()
    assert shown["rows"] > 0, "the page's script did not run: the test proves nothing"
    assert (shown["handlers"], shown["images"], shown["flags"]) == (0, 0, [])
    for value in (VERSION_SCRIPT, SPEC_SCRIPT, *ENV_SCRIPTS.values()):  # as text, escaped once
        assert value in shown["env"], value
    assert f"corpus 1.5.0{VERSION_SCRIPT}" in shown["text"]
    assert "&lt;" not in shown["text"]


def test_the_plugin_summary_line_prints_the_corpus_version_escaped(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    root = build_corpus(tmp_path)
    (root / "VERSION").write_text("1.0.0\x1b]0;owned\x07\u202e\n", encoding="utf-8")
    write_manifest(root)
    result = pytester.runpytest(
        "--streamproof=reference",
        f"--streamproof-corpus={root}",
        "--streamproof-transport=whole",
        "-p",
        "no:cacheprovider",
    )
    out = result.stdout.str()
    assert "on corpus 1.0.0\\x1b]0;owned\\x07" in out, out
    assert "\x1b]0;owned" not in out and "\u202e" not in out


TITLE_SCRIPT = "<img src=x onerror=window.pwned_title=1>"
NAME_SCRIPT = "<svg onload=window.pwned_name=1>"
RECORD_SCRIPT = "<img src=x onerror=window.pwned_record=1>"
PAGE_FLAGS = [*FLAGS, "pwned_title", "pwned_name", "pwned_record"]


@pytest.fixture(scope="module")
def hostile_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every other page the project renders, each fed a script where text goes:
    the matrix (``report``), the provider report and the history page."""
    folder = tmp_path_factory.mktemp("hostile-pages")
    root = build_corpus(folder, quirks=True)
    case = root / "cases" / STREAM / "case.json"
    data = json.loads(case.read_text(encoding="utf-8"))
    data["title"] = f"split {TITLE_SCRIPT}"
    case.write_text(json.dumps(data), encoding="utf-8")
    (root / "VERSION").write_text(f"1.5.0{VERSION_SCRIPT}\n", encoding="utf-8")
    # A provider's case, so the provider report has a table, and every quirk's
    # description carrying a script.
    shipped = default_root() / "cases" / "openai" / "tool-calls-finish-stop"
    shutil.copytree(shipped, root / "cases" / "openai" / "tool-calls-finish-stop")
    quirks = json.loads((root / "quirks.json").read_text(encoding="utf-8"))
    for quirk in quirks["quirks"].values():
        quirk["description"] = f"a quirk {TITLE_SCRIPT}"
    (root / "quirks.json").write_text(json.dumps(quirks), encoding="utf-8")
    write_manifest(root)
    adapter = folder / SPEC_SCRIPT / "adapter.py"
    adapter.parent.mkdir()
    naive = (ROOT / "tests" / "adapters" / "naive_lines.py").read_text(encoding="utf-8")
    adapter.write_text(
        naive.replace(
            'NAME = "naive-lines"', f"NAME = {NAME_SCRIPT!r}\nVERSION = {RECORD_SCRIPT!r}"
        ),
        encoding="utf-8",
    )
    results = folder / "results.json"

    def streamproof(*args: str | Path) -> None:
        proc = subprocess.run(
            [sys.executable, "-m", "streamproof", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr

    streamproof(
        "run", "--adapter", adapter, "--corpus", root, "--transport", "whole,lines",
        "--no-html", "--json", results,
    )  # fmt: skip
    pages = {"matrix": folder / "matrix.html", "providers": folder / "providers.html"}
    streamproof("report", results, "--corpus", root, "--output", pages["matrix"])
    streamproof("providers", "--corpus", root, "--output", pages["providers"])
    from streamproof.reporting.history import history_page
    from streamproof.reporting.render import template

    def record(version: str, verdict: str) -> dict[str, object]:
        return {
            "version": version,
            "status": "scored",
            "package": RECORD_SCRIPT,
            "resolved": {RECORD_SCRIPT: RECORD_SCRIPT},
            "cases": {f"generic/{RECORD_SCRIPT}": verdict},
            "corpus": {"sha256": "d"},
            "summary": {"groups": {}},
        }

    records = {
        "lib": [
            record(f"1.0{RECORD_SCRIPT}", "pass"),
            record("1.1", "fail"),
            {**record("1.2", "fail"), "status": "not scorable", "reason": RECORD_SCRIPT},
        ]
    }
    checked = {"lib": {"1.1": {"found": RECORD_SCRIPT, "source": RECORD_SCRIPT}}}
    page = history_page(records, "d", checked)
    html = template("history.html.j2").render(
        page=page, corpus={"version": VERSION_SCRIPT, "sha256": "d"}, tool=NAME_SCRIPT
    )
    pages["history"] = folder / "history.html"
    pages["history"].write_text(html, encoding="utf-8")
    return pages


@pytest.mark.parametrize("name", ["matrix", "providers", "history"])
def test_no_value_of_any_other_page_runs_as_script(
    hostile_pages: dict[str, Path], tmp_path: Path, name: str
) -> None:
    if MISSING is not None:
        pytest.skip(MISSING)
    path = hostile_pages[name]
    text = path.read_text(encoding="utf-8")
    page = Browser(tmp_path)
    try:
        page.open(path.as_uri())
        shown = page.run(
            "return {handlers: document.querySelectorAll('[onerror],[onload]').length,"
            " images: [...document.images].filter(i => i.src.endsWith('/x')).length,"
            " svgs: document.querySelectorAll('svg[onload]').length,"
            " text: document.body.innerText,"
            " flags: arguments[0].filter(f => window[f] !== undefined)}",
            PAGE_FLAGS,
        )
    finally:
        page.close()
    assert (shown["handlers"], shown["images"], shown["svgs"], shown["flags"]) == (0, 0, 0, [])
    # Each page did get a script to show, and shows it as text.
    planted = {"matrix": TITLE_SCRIPT, "providers": TITLE_SCRIPT, "history": RECORD_SCRIPT}[name]
    if name == "providers":
        assert VERSION_SCRIPT.replace("<", "&lt;").replace(">", "&gt;") in text
    escaped = planted.replace("<", "&lt;").replace(">", "&gt;")
    assert escaped in text, f"{name}: the planted value never reached the page"
    assert planted.split("=")[-1].rstrip(">") in shown["text"]  # the script, as text
