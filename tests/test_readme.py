"""README.md is a front door, and it and docs/ say what the data says.

The README stays short, its two commands are what CI runs, its links lead
somewhere; the figures are generated; docs/cli.md documents every command and
docs/adapters.md tables every built-in adapter.
"""

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
DOCS = sorted((ROOT / "docs").glob("*.md"))  # docs/audit/ is a record of its day: left out
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _doc(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def test_the_generated_figures_are_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "readme-figures")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_readme_is_a_front_door_of_at_most_250_lines() -> None:
    assert len(README.splitlines()) <= 250, "README.md: move reference material to docs/"


def test_the_readmes_two_commands_are_the_ones_ci_runs() -> None:
    block = re.search(r"```sh\n(# 1\..*?)```", README, re.S)
    assert block, "README.md: the block of the two commands is gone"
    lines = block.group(1).splitlines()
    commands = [line for line in lines if line and not line.startswith("#")]
    assert commands == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/streamproof run",
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test,adapters]' "
        "&& .venv/bin/streamproof setup-node && .venv/bin/python -m pytest",
    ]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install --quiet -e '.[test,adapters]'" in ci
    assert '"$venv/bin/streamproof" setup-node' in ci
    assert "-m pytest" in (ROOT / "scripts" / "check").read_text(encoding="utf-8")


def test_the_apt_line_installs_npm_only_where_node_lacks_it() -> None:
    # A Node.js that ships npm (nodejs.org, NodeSource) conflicts with Debian's npm package.
    installs = [line for line in README.splitlines() if "apt-get install" in line]
    assert installs, "README.md: the apt line is gone"
    for line in installs:
        assert " npm" not in line or line.startswith("command -v npm >/dev/null ||"), line


def test_every_relative_link_of_the_readme_and_docs_leads_somewhere() -> None:
    for page in [ROOT / "README.md", *DOCS]:
        for target in _LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}: ({target})"
            assert linked.exists(), f"{where} leads nowhere"
            if anchor and linked.suffix == ".md":
                assert anchor in _anchors(linked.read_text(encoding="utf-8")), where


def _anchors(markdown: str) -> set[str]:
    """The ids GitHub gives the headings: lower case, punctuation dropped, spaces as '-'."""
    headings = re.findall(r"^#+ (.+)$", markdown, re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def test_every_corpus_version_mentioned_is_the_current_one() -> None:
    version = load_corpus().version
    for name, text in [("README.md", README), *((p.name, p.read_text("utf-8")) for p in DOCS)]:
        mentioned = set(re.findall(r"corpus (\d+\.\d+\.\d+)", text))
        assert mentioned <= {version}, f"{name} mentions corpus {sorted(mentioned)}, not {version}"


def test_every_command_of_help_is_documented() -> None:
    reference = _doc("cli.md")
    for command in COMMANDS:
        assert f"streamproof {command}" in reference, f"docs/cli.md does not list {command!r}"


def test_every_built_in_adapter_is_in_the_adapters_table() -> None:
    table = _doc("adapters.md").split("## Built-in adapters", 1)[1].split("\n## ", 1)[0]
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
