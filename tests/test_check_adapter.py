"""``streamproof check-adapter``: our own adapters pass, each broken one fails its rule."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from streamproof.harness.adapter_check import check_adapter
from streamproof.harness.loader import AdapterError

ROOT = Path(__file__).parent.parent
BROKEN = Path(__file__).parent / "adapters" / "protocol"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="no system node")

RULES = [
    "handshake",
    "name",
    "version",
    "capabilities",
    "protocol",
    "call",
    "seq",
    "keeps-serving",
    "empty-body",
    "large-body",
    "tiny-reads",
    "non-ascii",
    "quiet-after-reply",
    "stop",
    "stdin-closed",
]


def _check(spec: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamproof", "check-adapter", spec, "--timeout", "2", *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )


def _failing(stdout: str) -> list[str]:
    return [line.split()[1].rstrip(":") for line in stdout.splitlines() if line.startswith("FAIL")]


def _passes(spec: str) -> None:
    proc = _check(spec)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line.split()[1].rstrip(":") for line in proc.stdout.splitlines()[1::2]][:-1] == RULES
    assert proc.stdout.rstrip().endswith(f"all {len(RULES)} required behaviours hold")


def test_the_python_template_passes() -> None:
    _passes(f"cmd:{sys.executable} adapters/templates/protocol_adapter.py")


@needs_node
def test_the_node_template_passes() -> None:
    _passes(f"cmd:{NODE} adapters/node/template.mjs")


def test_the_reference_adapter_through_the_worker_passes() -> None:
    _passes("reference")


@pytest.mark.parametrize(
    ("adapter", "rule"),
    [
        ("banner", "handshake"),
        ("no_name", "name"),
        ("no_version", "version"),
        ("unknown_capability", "capabilities"),
        ("protocol_two", "protocol"),
        ("call_string", "call"),
        ("counts_seq", "seq"),
        ("outcome_list", "seq"),
        ("nan_outcome", "seq"),
        ("exits_after_crash", "keeps-serving"),
        ("empty_body_dies", "empty-body"),
        ("large_body_hangs", "large-body"),
        ("tiny_reads_print", "tiny-reads"),
        ("non_ascii_dies", "non-ascii"),
        ("late_line", "quiet-after-reply"),
        ("dies_after_reply", "quiet-after-reply"),
        ("ignores_stop", "stop"),
        ("ignores_eof", "stdin-closed"),
    ],
)
def test_a_broken_adapter_fails_naming_its_rule(adapter: str, rule: str) -> None:
    proc = _check(f"cmd:{sys.executable} {BROKEN / (adapter + '.py')}")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    failing = _failing(proc.stdout)
    assert rule in failing, proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    # Rules about single cases fail alone: the script restarts a child that broke one.
    if rule not in ("seq", "handshake"):
        assert failing == [rule], proc.stdout
    assert proc.stdout.rstrip().endswith(f"required behaviours fail: {', '.join(failing)}")


def test_what_the_adapter_did_is_printed_under_each_rule() -> None:
    proc = _check(f"cmd:{sys.executable} {BROKEN / 'no_version.py'}")
    lines = proc.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("FAIL  version:"))
    assert "MUST" in lines[at]
    assert lines[at + 1].strip() == "the adapter: no version"
    late = _check(f"cmd:{sys.executable} {BROKEN / 'late_line.py'}").stdout
    assert "then wrote a line: " in late and "late: a background task failed" in late


def test_a_command_that_cannot_start_is_one_line_and_exit_2() -> None:
    proc = _check("cmd:/no/such/program --flag")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "cannot start '/no/such/program'" in proc.stderr
    assert _check("reference", "--timeout", "0").returncode == 2


def test_an_adapter_that_cannot_load_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = _check(str(tmp_path / "missing_adapter.py"))
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("streamproof: ")


def test_the_library_yields_one_check_per_rule() -> None:
    checks = list(check_adapter(f"cmd:{sys.executable} {BROKEN / 'protocol_two.py'}", timeout=2))
    assert [c.rule for c in checks] == RULES
    assert [c.rule for c in checks if not c.ok] == ["protocol"]
    with pytest.raises(AdapterError):
        list(check_adapter("cmd:/no/such/program"))


def test_the_check_writes_a_trace(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    proc = _check(
        f"cmd:{sys.executable} adapters/templates/protocol_adapter.py", "--trace", str(trace)
    )
    assert proc.returncode == 0
    text = trace.read_text(encoding="utf-8")
    assert '"dir": "to-adapter"' in text and '"dir": "from-adapter"' in text
    assert "check-adapter/large" in text
