"""Every document the project cites is one it contains.

A reader has the repository and nothing else: a comment, docstring, schema
or page that sends them to a document outside it (an external contract, a
research note, a path on the machine it was written on) is a dead end.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).parent.parent

# Documents that exist only outside the repository, and absolute paths of a
# machine. Spelled in pieces so that this file does not cite them itself.
OUTSIDE = re.compile(r"\bCON" + r"TRACT\b|provider" + r"-facts|/wo" + r"rk/|\.\./sha" + r"red/")
# Corpus files are rewritten by the corpus's owners only; each exception
# names the file and stays until its text is fixed there.
KNOWN = {"corpus/cases/novita/router-stream-sla-metrics-usage-chunk/case.json"}
# A path into the project's docs or schemas folder, not inside a URL.
CITED = re.compile(r"(?<![\w/.-])((?:docs|schemas)/[\w.-]+\.(?:md|json))")


def _project_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None  # a binary file cites nothing


def test_no_file_cites_a_document_outside_the_repository() -> None:
    found = []
    for path in _project_files():
        name = path.relative_to(ROOT).as_posix()
        text = _text(path)
        if text is None or name in KNOWN:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{name}:{number}: {line.strip()[:100]}")
    assert not found, "cites a document the project does not contain:\n" + "\n".join(found)


def test_every_cited_project_document_exists() -> None:
    missing = []
    for path in _project_files():
        text = _text(path)
        if text is None:
            continue
        for cited in set(CITED.findall(text)):
            if not (ROOT / cited).exists():
                missing.append(f"{path.relative_to(ROOT).as_posix()}: {cited}")
    assert not missing, "cites a project file that does not exist:\n" + "\n".join(missing)


def test_the_check_catches_what_it_is_for() -> None:
    assert OUTSIDE.search("see CON" + "TRACT §2")
    assert OUTSIDE.search("provider" + "-facts §27")
    assert OUTSIDE.search('spec_from_file_location("r", "/wo' + 'rk/main/a.py")')
    assert not OUTSIDE.search("a contract between the harness and its adapters")
    assert CITED.findall("see docs/protocol.md and schemas/outcome.schema.json") == [
        "docs/protocol.md",
        "schemas/outcome.schema.json",
    ]
    assert not CITED.findall("https://docs.rs/crate/x/latest/source/docs/Choice.md")
