"""The one way into a corpus folder: regular files, no links, a size bound.

A corpus may come from someone else (a pull request, a vendored copy), so
nothing in it may make streamproof read outside it or read for ever: a
symbolic link (to ``/proc/self/environ``, ``/etc/passwd``, a folder
elsewhere), a hard link (a second name of a file that may live outside),
a FIFO or a device is refused with one line naming the path, and so is a
file larger than :data:`MAX_FILE_BYTES`. ``walk`` lists what a
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
    "MAX_FILE_BYTES",
    "SIZE_VARIABLE",
    "Digests",
    "UnsafeFile",
    "decode",
    "max_file_bytes",
    "parse_json",
    "read_chunks",
    "read_file",
    "read_json",
    "read_text",
    "tree",
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
    # ASCII digits only: str.isdigit takes superscripts, which int() refuses
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
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


# The installed package's own data: installers such as uv hard-link its files
# from their cache, and it is as trusted as the code beside it.
_INSTALLED = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "_data")


def _hard_link(path: Path | str, info: os.stat_result) -> UnsafeFile | None:
    """The refusal of a regular file with more than one name, or ``None``.

    Its other name may be anywhere on the file system: what a corpus holds
    would be another file's bytes, read (and shown, and served) as the corpus's.
    """
    if info.st_nlink < 2 or not stat.S_ISREG(info.st_mode):
        return None
    where = os.path.realpath(os.path.dirname(path))
    if os.path.commonpath((_INSTALLED, where)) == _INSTALLED:
        return None
    return _refusal(path, f"a hard link ({info.st_nlink} names for one file)")


def _refusal(path: Path | str, kind: str) -> UnsafeFile:
    return UnsafeFile(f"{path}: {kind}; a corpus holds regular files and folders only")


def _check_folders(path: Path | str, root: Path | None) -> None:
    """Refuse a link among the folders between ``root`` and ``path``."""
    if root is None:
        return
    top, folder = os.fspath(root), os.path.dirname(os.fspath(path))
    if folder != top and not folder.startswith(top.rstrip(os.sep) + os.sep):
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
        linked = _hard_link(path, info)
        if linked is not None:
            raise linked
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
    return decode(read_file(path, root, seen), path)


def decode(data: bytes, path: Path | str) -> str:
    """``data``, read from ``path``, decoded as UTF-8; ``UnsafeFile`` if it is not UTF-8."""
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


def parse_json(text: str, path: Path | str, *, depth: int = MAX_DEPTH, **hooks: Any) -> Any:
    """``text``, read from ``path`` through the gate, parsed as ``read_json`` does.

    A key stated twice in one object is refused: a reader of the file sees
    the first, ``json`` keeps the last (RFC 8259 §4 leaves it open).
    ``depth`` bounds the nesting; ``hooks`` go to ``json.loads`` (strict
    JSON's ``parse_constant`` and ``parse_float``, say).
    """
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, **hooks)
    except RecursionError:
        raise UnsafeFile(f"{path}: nested deeper than {depth} levels") from None
    except _DuplicateKey as exc:
        raise UnsafeFile(f"{path}: key {exc.key!r} twice in one object") from None
    except ValueError as exc:
        raise UnsafeFile(f"{path}: not valid JSON: {exc}") from None
    # (a text with no more brackets than the bound cannot nest past it)
    if text.count("[") + text.count("{") > depth and _depth_over(data, depth):
        raise UnsafeFile(f"{path}: nested deeper than {depth} levels")
    return data


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object; ``_DuplicateKey`` names a key it states twice."""
    data = dict(pairs)
    if len(data) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
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
    return [name for name, _ in tree(root, skip=skip)[0]]


def tree(
    root: Path, *, skip: frozenset[str] = frozenset({"__pycache__"})
) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
    """``walk``'s files, each with its ``lstat``, and every folder under ``root``
    named the same way (both in ``walk``'s order): one listing of the tree that a
    load reads instead of asking about each path."""
    files: list[tuple[str, os.stat_result]] = []
    folders: list[str] = []
    top = os.fspath(root)
    pending = [top]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    if entry.name not in skip:
                        pending.append(entry.path)
                        folders.append(entry.path[len(top) + 1 :].replace(os.sep, "/"))
                    continue
                kind = _kind(info.st_mode)
                if kind is not None:
                    raise _refusal(Path(entry.path), kind)
                linked = _hard_link(entry.path, info)
                if linked is not None:
                    raise linked
                files.append((entry.path[len(top) + 1 :].replace(os.sep, "/"), info))
    files.sort(key=lambda pair: _parts(pair[0]))
    folders.sort(key=_parts)
    return files, folders


def _parts(name: str) -> list[str]:
    return name.split("/")
