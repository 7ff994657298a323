"""README.md says what the data says: generated figures, every command, every adapter."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from streamproof.cli import COMMANDS
from streamproof.corpus import load_corpus
from streamproof.harness.loader import builtin_names

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_generated_figures_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "readme-figures")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_corpus_version_mentioned_is_the_current_one() -> None:
    version = load_corpus().version
    mentioned = set(re.findall(r"corpus (\d+\.\d+\.\d+)", README))
    assert mentioned <= {version}, f"README mentions corpus {sorted(mentioned)}, not {version}"


def test_every_command_of_help_is_documented() -> None:
    for command in COMMANDS:
        assert f"streamproof {command}" in README, f"README does not document {command!r}"


def test_every_built_in_adapter_is_in_the_adapters_table() -> None:
    table = README.split("## Built-in adapters", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z0-9-]+)`(?:, `([a-z0-9-]+)`)?", table, re.M))
    names = {n for pair in listed for n in pair if n}
    assert names == set(builtin_names()), (
        f"missing: {sorted(set(builtin_names()) - names)}; "
        f"gone: {sorted(names - set(builtin_names()))}"
    )


def test_no_test_reads_files_outside_the_repository() -> None:
    outside = re.compile(r"(ROOT|HERE)\.parent\.parent|\.\./shared|/wo" r"rk/")
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name == "test_readme.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not outside.search(text), f"{path.relative_to(ROOT)} reads outside the repository"
