"""Running the ``streamproof`` command as a user would, the JSON files it reads and writes,
and the small corpora tests run it on."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any


def streamproof(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m streamproof ARGS`` in a fresh process, its output captured.

    A results file ``run`` wrote (``--json FILE``) must match
    ``schemas/results.schema.json``: the run does not check its own output,
    every test that makes one does.
    """
    done = subprocess.run(
        [sys.executable, "-m", "streamproof", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )
    words = list(map(str, args))
    if words[:1] == ["run"] and "--json" in words[:-1]:
        written = Path(cwd or ".") / words[words.index("--json") + 1]
        if written.is_file():
            assert_valid_results(load(written))
    return done


def assert_valid_results(document: Any) -> None:
    """``document`` matches the results schema (an AssertionError names the first problem)."""
    from streamproof.corpus.schemas import schema_errors

    problem = schema_errors("results", document)
    assert problem is None, f"the results document breaks its schema: {problem}"


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def dump(data: Any, path: Path) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def small_corpus(root: Path, first: dict[str, int]) -> Path:
    """A corpus at ``root`` holding the first N cases (by folder name) of each provider of
    the shipped one that ``first`` names, with its VERSION, FORMAT and manifest."""
    from streamproof.corpus import default_root
    from streamproof.corpus.validate import write_manifest

    shipped = default_root()
    for provider, count in first.items():
        for folder in sorted((shipped / "cases" / provider).iterdir())[:count]:
            shutil.copytree(folder, root / "cases" / provider / folder.name)
    for name in ("VERSION", "FORMAT"):
        shutil.copy(shipped / name, root / name)
    write_manifest(root)
    return root
