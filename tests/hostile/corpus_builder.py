"""Small corpora built in a temporary folder, for the hostile tests to spoil."""

from __future__ import annotations

import json
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


def one_stream_corpus(
    root: Path, case_id: str, title: str, body: bytes, headers: dict[str, str]
) -> Path:
    """A corpus at ``root`` of one streamed case, ``case_id``, answering ``body`` with
    ``headers``: a test's own case (no shape known), expecting a complete answer."""
    (root / "cases" / case_id).mkdir(parents=True)
    (root / "VERSION").write_text("0.0.1\n")
    (root / "FORMAT").write_text("2\n")
    (root / "cases" / case_id / "response.sse").write_bytes(body)
    case = {
        "id": case_id,
        "title": title,
        "provider": case_id.split("/")[0],
        "provenance": {"kind": "synthetic", "source": "this test", "observed": "2026-01"},
        "evidence": {
            "shape": [{"kind": "none", "note": "written for this test"}],
            "reading": {"basis": "project", "section": "semantics §12"},
        },
        "request": {"model": "m", "messages": [], "stream": True},
        "response": {"status": 200, "headers": headers, "body": "response.sse"},
        "requires": ["content"],
        "severity": "should",
        "tags": [],
        "spec": ["semantics §5.2"],
        "expected": {"status": "complete"},
    }
    (root / "cases" / case_id / "case.json").write_text(json.dumps(case))
    return root
