"""Running the ``streamproof`` command as a user would, and the JSON files it reads and writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def streamproof(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m streamproof ARGS`` in a fresh process, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "streamproof", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def dump(data: Any, path: Path) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path
