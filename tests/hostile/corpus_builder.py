"""Small corpora built in a temporary folder, for the hostile tests to spoil."""

from __future__ import annotations

import shutil
from pathlib import Path

from streamproof.corpus import default_root
from streamproof.corpus.validate import write_manifest

#: A stream case, and one with a chunks.json (the recorded transport).
STREAM = "generic/text-split-per-token"
CHUNKED = "generic/cjk-characters-split-across-reads"


def build_corpus(folder: Path, *, quirks: bool = False) -> Path:
    """A two-case corpus with a current manifest; ``quirks`` adds the catalogue."""
    shipped = default_root()
    root = folder / "corpus"
    for case_id in (STREAM, CHUNKED):
        shutil.copytree(shipped / "cases" / case_id, root / "cases" / case_id)
    shutil.copy(shipped / "VERSION", root / "VERSION")
    shutil.copy(shipped / "FORMAT", root / "FORMAT")
    if quirks:
        shutil.copy(shipped / "quirks.json", root / "quirks.json")
    write_manifest(root)
    return root


def one_line(text: str) -> bool:
    """A message a user can read: one line, no traceback."""
    return "\n" not in text.strip() and "Traceback" not in text
