"""What a corpus load found, kept between processes while no file of the corpus changed.

Loading a corpus reads, hashes and checks every file: about a tenth of a
second for 500 cases, paid again by every process that loads it (each
command, each shard of a CI matrix, each test). A clean load keeps what it
found in the user's cache folder (``checked.cache_folder``): the corpus
digest, and for each case what planning reads (id, provider, severity,
needs, whether it runs, the digest of its expectation, whether it has
``chunks.json``) and the sha256 of its ``case.json`` and body. With it goes
the **signature** of the listing the load began with: each file's path,
size, inode, device, link count, and modification and change times in
nanoseconds, all of which the listing's ``lstat`` gives for nothing.

A later load lists the corpus (refusing links and special files as ever);
if the signature is the same, it takes the cases from the cache and reads no
file. Any difference (a file added, removed, written, touched, renamed,
replaced) and it reads everything, as with no cache. A change time cannot
be set back by a user, so a file changed since has a new one. A load never
keeps a listing in which a file changed less than ``RECENT_NS`` before it
began (its change time could still be shared with a later change), and the
key names the tool's version, the loader's own source, the schemas, the
corpus folder and the file-size bound, so none of them can change under a
cached load. A case still reads its files back when it runs, and a file
that differs from the sha256 the load kept is a ``CorpusError``, as ever.
``streamproof validate`` never uses the cache: it reads every byte.
``STREAMPROOF_CACHE_DIR=off`` turns it off; an unreadable, unwritable or
malformed cache file is the same as none.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from ..__about__ import __version__
from ..atomic import write_atomic
from .checked import cache_folder, schemas_digest
from .entry import Case, CaseFiles
from .gate import max_file_bytes

__all__ = ["RECENT_NS", "Listing", "cached_load", "keep_load", "signature"]

#: A listing with a file changed this recently (2 s) is never kept.
RECENT_NS = 2_000_000_000

#: A listing: each file's path from the root and its ``lstat``, in listing order.
Listing = list[tuple[str, os.stat_result]]

_FORMAT = 1


@cache
def _loader_digest() -> str:
    """sha256 of the source of the modules whose rules a load applies."""
    digest = hashlib.sha256(__version__.encode("utf-8") + b"\0")
    here = Path(__file__).parent
    for name in ("cases.py", "entry.py", "gate.py", "checked.py", "load_cache.py"):
        digest.update(name.encode("utf-8") + b"\0" + (here / name).read_bytes() + b"\0")
    return digest.hexdigest()


def _cache_file(root: Path) -> Path | None:
    folder = cache_folder()
    if folder is None:
        return None
    key = "\0".join([_loader_digest(), schemas_digest(), str(root), str(max_file_bytes())])
    return folder / f"corpus-load-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:24]}.json"


def signature(listing: Listing) -> str:
    """sha256 of every file's path and ``lstat`` facts that a change to it would move."""
    lines = "".join(
        f"{rel}\0{s.st_size}\0{s.st_ino}\0{s.st_dev}\0{s.st_nlink}\0"
        f"{s.st_mtime_ns}\0{s.st_ctime_ns}\n"
        for rel, s in listing
    )
    return hashlib.sha256(lines.encode("utf-8", "surrogateescape")).hexdigest()


def cached_load(root: Path, listing: Listing) -> tuple[str, list[Case], str] | None:
    """The version, cases and digest of the corpus at ``root`` as the cache keeps them,
    if it keeps this very listing; else ``None``."""
    path = _cache_file(root)
    if path is None:
        return None
    try:
        kept = json.loads(path.read_bytes())
        if kept.get("format") != _FORMAT or kept.get("signature") != signature(listing):
            return None
        return str(kept["version"]), [_case(root, row) for row in kept["cases"]], kept["digest"]
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def keep_load(
    root: Path, listing: Listing, began_ns: int, version: str, cases: list[Case], digest: str
) -> None:
    """Keep a clean load of ``listing`` (begun at ``began_ns``, wall clock), unless a
    file of it changed too recently to be told from a later change."""
    path = _cache_file(root)
    if path is None or any(s.st_ctime_ns > began_ns - RECENT_NS for _, s in listing):
        return
    rows = []
    for case in cases:
        files = case.files
        if files is None:  # (a load makes every case from its files)
            return
        rows.append(
            [
                files.folder.relative_to(root).as_posix(),
                files.case_json_sha256.hex(),
                files.body,
                files.body_sha256.hex(),
                case.has_chunks,
                case.id,
                case.provider,
                case.severity,
                sorted(case.requires),
                case.runnable,
                case.expected_sha256,
            ]
        )
    kept = {
        "format": _FORMAT,
        "signature": signature(listing),
        "version": version,
        "digest": digest,
        "cases": rows,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(kept, separators=(",", ":"), ensure_ascii=False))
    except OSError:
        pass  # an unwritable cache is no cache


def _case(root: Path, row: list[Any]) -> Case:
    folder, case_json, body, body_sha, has_chunks, id_, provider, severity = row[:8]
    requires, runnable, expected = row[8:11]
    files = CaseFiles(root / folder, bytes.fromhex(case_json), body, bytes.fromhex(body_sha))
    return Case.from_facts(
        files,
        has_chunks=bool(has_chunks),
        id=str(id_),
        provider=str(provider),
        severity=str(severity),
        requires=frozenset(map(str, requires)),
        runnable=bool(runnable),
        expected_sha256=str(expected),
    )
