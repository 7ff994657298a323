"""Schema checks remembered by the sha256 of what was checked.

A JSON Schema check is a pure function of the schemas and of the JSON text
checked, so a text found valid once is valid again: ``schema_problem`` keys
each check by the sha256 of the schema's name and the exact text (the bytes
actually read from a case file, or an outcome in canonical JSON), never by
what a manifest claims. Only passing checks are remembered; a failing one
is checked again, so its message is always today's.

The texts of the shipped corpus come checked: ``schemas/checked-corpus.txt``
lists the digest of each of its case files, made by ``scripts/checked-corpus``
and taken only while its first line names these very schemas (a test holds it
current), so that the first load on a new machine (each job of a CI matrix)
does not check 500 cases again.

The digests of valid texts are kept for the process and, between processes
(a run's own load and its pytest session, xdist workers, the next run), in
``streamproof/schema-checks-<schemas digest>.txt`` under the user's cache
folder: ``$STREAMPROOF_CACHE_DIR``, else ``$XDG_CACHE_HOME/streamproof``,
else ``~/.cache/streamproof``. ``STREAMPROOF_CACHE_DIR=off`` keeps it in
memory only. A new schema makes a new file. An unreadable or unwritable
cache is the same as an empty one.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
from functools import cache
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..resources import data_path
from .schemas import schema_errors

__all__ = [
    "SHIPPED",
    "cache_file",
    "cache_folder",
    "check_key",
    "outcome_text",
    "schema_problem",
    "schemas_digest",
    "shipped_header",
]

#: At most this many digests are kept on disk (about 6.5 MB); the newest stay.
MAX_KEPT = 100_000

_lock = threading.Lock()
_valid: set[str] | None = None
_added: list[str] = []


@cache
def schemas_digest() -> str:
    """sha256 of every shipped schema, by name."""
    digest = hashlib.sha256()
    for path in sorted(data_path("schemas").glob("*.schema.json")):
        digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_folder() -> Path | None:
    """The user's streamproof cache folder, or ``None`` when caches are off."""
    folder = os.environ.get("STREAMPROOF_CACHE_DIR")
    if folder == "off":
        return None
    if not folder:
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) if xdg else Path.home() / ".cache"
        folder = str(base / "streamproof")
    return Path(folder)


def cache_file() -> Path | None:
    """Where the digests of valid texts are kept, or ``None`` for memory only."""
    folder = cache_folder()
    return None if folder is None else folder / f"schema-checks-{schemas_digest()[:16]}.txt"


#: The digests of the shipped corpus's case texts, in ``schemas/``.
SHIPPED = "checked-corpus.txt"


def check_key(name: str, text: str) -> str:
    """What a check of ``text`` against schema ``name`` is remembered by."""
    return hashlib.sha256(f"{name}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def shipped_header() -> str:
    """The first line of ``schemas/checked-corpus.txt`` made with these schemas."""
    return f"schemas {schemas_digest()}"


def _shipped() -> set[str]:
    """The digests ``schemas/checked-corpus.txt`` lists, if made with these schemas."""
    try:
        lines = (data_path("schemas") / SHIPPED).read_text(encoding="ascii").splitlines()
    except (OSError, ValueError):
        return set()
    if not lines or lines[0] != shipped_header():
        return set()
    return {line for line in lines[1:] if len(line) == 64}


def _known() -> set[str]:
    global _valid
    if _valid is None:
        _valid = _shipped()
        path = cache_file()
        if path is not None:
            try:
                lines = path.read_text(encoding="ascii").split()
            except (OSError, ValueError):
                lines = []
            _valid.update(line for line in lines if len(line) == 64)
    return _valid


def outcome_text(outcome: Any) -> str:
    """An outcome as canonical JSON: one text per JSON value."""
    import json

    return json.dumps(outcome, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def schema_problem(name: str, instance: Any, text: str) -> str | None:
    """``schema_errors(name, instance)``, where ``instance`` is ``text`` parsed.

    A text found valid before is not checked again.
    """
    key = check_key(name, text)
    with _lock:
        if key in _known():
            return None
    problem = schema_errors(name, instance)
    if problem is None:
        with _lock:
            if not _added:
                atexit.register(save)
            _known().add(key)
            _added.append(key)
    return problem


def save() -> None:
    """Add this process's new digests to the cache file (at exit, or when called)."""
    with _lock:
        added = list(_added)
        _added.clear()
    path = cache_file()
    if not added or path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            kept = path.read_text(encoding="ascii").split()
        except FileNotFoundError:
            kept = []
        fresh = set(added)
        lines = [line for line in kept if len(line) == 64 and line not in fresh] + added
        write_atomic(path, "".join(f"{line}\n" for line in lines[-MAX_KEPT:]), encoding="ascii")
    except (OSError, ValueError):
        pass  # a cache that cannot be written is only slower
