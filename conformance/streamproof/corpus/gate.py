"""The one way into a corpus folder: regular files, no links, a size bound.

A corpus may come from someone else (a pull request, a vendored copy), so
nothing in it may make streamproof read outside it or read for ever: a
symbolic link (to ``/proc/self/environ``, ``/etc/passwd``, a folder
elsewhere), a FIFO or a device is refused with one line naming the path,
and so is a file larger than :data:`MAX_FILE_BYTES`. ``walk`` lists what a
corpus holds and ``read_file`` reads one file; the loader, the manifest and
the corpus digest all go through them, so the digest covers exactly the
files that are loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "Digests",
    "MAX_FILE_BYTES",
    "SIZE_VARIABLE",
    "UnsafeFile",
    "max_file_bytes",
    "parse_json",
    "read_chunks",
    "read_file",
    "read_json",
    "read_text",
    "walk",
]

#: The environment variable that changes the bound on a corpus file's size.
SIZE_VARIABLE = "STREAMPROOF_MAX_FILE_BYTES"
#: Default bound on one corpus file: 64 MiB, 60 times the largest body an
#: OpenAI-compatible server sends for one completion, and small enough that
#: a run holding every body of a corpus in memory stays bounded.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Deepest nesting of a corpus JSON file. A case is a few levels deep; the
#: bound keeps the schema check and the comparison (both recursive) far from
#: Python's recursion limit.
MAX_DEPTH = 64

# O_NOFOLLOW: the last component is never followed; O_NONBLOCK: opening a
# FIFO does not wait for a writer (the fstat check then refuses it).
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


#: The sha256 (hex) of each file read, by its path as a string (``read_file``'s ``seen``).
Digests = dict[str, str]


class UnsafeFile(ValueError):
    """A corpus path that is not a regular file within bounds; the message is one line."""


def max_file_bytes() -> int:
    """The bound in force: ``$STREAMPROOF_MAX_FILE_BYTES`` or :data:`MAX_FILE_BYTES`."""
    value = os.environ.get(SIZE_VARIABLE, "").strip()
    if not value:
        return MAX_FILE_BYTES
    if not value.isdigit() or int(value) < 1:
        raise UnsafeFile(f"${SIZE_VARIABLE} is {value!r}, not a positive number of bytes")
    return int(value)


def _kind(mode: int) -> str | None:
    """What a non-regular, non-folder entry is, or ``None`` for one we read."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        return "not a regular file"
    return None


def _refusal(path: Path | str, kind: str) -> UnsafeFile:
    return UnsafeFile(f"{path}: {kind}; a corpus holds regular files and folders only")


def _check_folders(path: Path | str, root: Path | None) -> None:
    """Refuse a link among the folders between ``root`` and ``path``."""
    if root is None:
        return
    top, folder = os.fspath(root), os.path.dirname(os.fspath(path))
    if os.path.commonpath((top, folder)) != top:
        raise UnsafeFile(f"{path}: outside the corpus {root}")
    while len(folder) > len(top):  # string work: this runs for every file read
        kind = _kind(os.lstat(folder).st_mode)
        if kind is not None:
            raise _refusal(Path(folder), kind)
        folder = os.path.dirname(folder)


def read_file(path: Path | str, root: Path | None = None, seen: Digests | None = None) -> bytes:
    """The bytes of the regular file ``path``, opened without following links.

    With ``root``, every folder between it and ``path`` must be a real folder
    too. ``OSError`` when the file cannot be opened (missing, unreadable);
    ``UnsafeFile`` for a link, a special file or a file over the bound.
    With ``seen``, the sha256 of the bytes read is kept there under ``path``.
    """
    limit = max_file_bytes()
    _check_folders(path, root)
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        if os.path.islink(path):  # ELOOP, or EMLINK on some systems
            raise _refusal(path, "a symbolic link") from None
        raise exc
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode)
        if kind is not None:
            raise _refusal(path, kind)
        if info.st_size > limit:
            raise UnsafeFile(_too_large(path, info.st_size, limit))
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while we read
            raise UnsafeFile(_too_large(path, size, limit))
        data = b"".join(chunks)
        if seen is not None:
            seen[os.fspath(path)] = hashlib.sha256(data).hexdigest()
        return data
    finally:
        os.close(fd)


def _too_large(path: Path | str, size: int, limit: int) -> str:
    bound = f"the bound of {limit} bytes per corpus file (${SIZE_VARIABLE})"
    return f"{path}: {size} bytes, over {bound}"


def read_text(path: Path, root: Path | None = None, seen: Digests | None = None) -> str:
    """``read_file`` decoded as UTF-8; ``UnsafeFile`` names a file that is not UTF-8."""
    data = read_file(path, root, seen)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1]
        raise UnsafeFile(f"{path}: not UTF-8 (byte {exc.start} is {bad!r})") from None


def read_json(path: Path, root: Path | None = None, seen: Digests | None = None) -> Any:
    """``read_text`` parsed as JSON, at most :data:`MAX_DEPTH` levels deep.

    ``UnsafeFile`` carries one line for every way the bytes can be wrong.
    """
    return parse_json(read_text(path, root, seen), path)


def parse_json(text: str, path: Path | str) -> Any:
    """``text``, read from ``path`` through the gate, parsed as ``read_json`` does."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise UnsafeFile(f"{path}: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise UnsafeFile(f"{path}: not valid JSON: {exc}") from None
    # (a text with no more brackets than the bound cannot nest past it)
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth_over(data, MAX_DEPTH):
        raise UnsafeFile(f"{path}: nested deeper than {MAX_DEPTH} levels")
    return data


def read_chunks(
    path: Path, root: Path | None = None, seen: Digests | None = None
) -> dict[str, Any]:
    """A ``chunks.json`` through the gate; ``ValueError`` says what is wrong."""
    try:
        data = read_json(path, root, seen)
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"not a JSON object but {type(data).__name__}")
    return data


def _depth_over(data: Any, limit: int) -> bool:
    """Whether ``data`` nests deeper than ``limit``, found without recursion."""
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in item)
    return False


def walk(root: Path, *, skip: frozenset[str] = frozenset({"__pycache__"})) -> list[str]:
    """Every file under ``root``, as its path from ``root`` with ``/`` between the
    parts, in the order of those parts; ``UnsafeFile`` for the first entry that is
    not a regular file or a real folder. Folders named in ``skip`` are left out."""
    files: list[str] = []
    top = os.fspath(root)
    pending = [top]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    if entry.name not in skip:
                        pending.append(entry.path)
                    continue
                kind = _kind(mode)
                if kind is not None:
                    raise _refusal(Path(entry.path), kind)
                files.append(entry.path[len(top) + 1 :].replace(os.sep, "/"))
    files.sort(key=lambda name: name.split("/"))
    return files
