"""Loading the corpus: cases, their bodies and the corpus identity.

Every case is checked against ``schemas/case.schema.json`` as it loads; a
problem is one line naming the file. The deeper lint of ``validate``
(manifest, titles, capabilities, spec references, secrets) is in
``streamproof.corpus.validate``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..errors import CorpusError
from ..resources import data_path
from .entry import Case, CaseFiles, expectation_digest
from .checked import schema_problem
from .load_cache import Listing, cached_load, keep_load
from .gate import (
    Digests,
    UnsafeFile,
    parse_json,
    read_chunks,
    read_file,
    read_json,
    read_text,
    tree,
    walk,
)

__all__ = ["SEVERITIES", "Case", "Corpus", "CorpusError", "expectation_digest", "load_corpus"]

#: A case's severity, most severe first.
SEVERITIES = ("must", "should", "may")


@dataclass(frozen=True)
class Corpus:
    root: Path
    version: str
    cases: list[Case]
    # The digest as the load worked it out, from the very bytes it read
    # (``load_corpus``); without it, ``sha256`` reads the folder.
    digest: str | None = field(default=None, repr=False, compare=False)

    @cached_property
    def sha256(self) -> str:
        """The digest of every file but the manifest (see corpus/README.md)."""
        return self.digest or tree_digest(file_digests(self.root))


def default_root() -> Path:
    return data_path("corpus")


def file_digests(
    root: Path, known: Digests | None = None, files: list[str] | None = None
) -> dict[str, str]:
    """sha256 of every corpus file but ``manifest.json``, by POSIX relative path.

    The files are listed and read through ``corpus.gate``, as the loader reads
    them: a link or a special file anywhere is a ``CorpusError``, never a file
    that is loaded but not digested. A file in ``known`` (a load's digests)
    is not read again. ``files``: the load's own listing of the tree (``gate.tree``),
    taken before it read a file, rather than a second one.
    """
    digests = {}
    known = known or {}
    try:
        for rel in walk(root) if files is None else files:
            if rel != "manifest.json":
                path = os.path.join(root, rel)
                digest = known.get(path)
                if digest is None:
                    digest = hashlib.sha256(read_file(path, root)).hexdigest()
                digests[rel] = digest
    except UnsafeFile as exc:
        raise CorpusError([str(exc)]) from None
    return digests


def read_manifest(root: Path) -> dict[str, Any]:
    """``manifest.json``, its shape checked: ``CorpusError`` is one line naming the problem.

    ``version`` and ``sha256`` are strings, ``files`` maps paths to sha256
    digests, ``retired`` maps case ids to the version that retired them.
    """
    path = root / "manifest.json"
    try:
        data = read_json(path, root)
    except OSError as exc:
        raise CorpusError([f"{path}: cannot read: {exc.strerror or exc}"]) from None
    except UnsafeFile as exc:
        raise CorpusError([str(exc)]) from None
    if not isinstance(data, dict):
        raise CorpusError([f"{path}: not a JSON object but {type(data).__name__}"])
    for key in ("version", "sha256"):
        if key in data and not isinstance(data[key], str):
            raise CorpusError([f"{path}: {key!r} is {data[key]!r}, not a string"])
    for key, what in (("files", "file path to sha256"), ("retired", "case id to version")):
        value = data.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise CorpusError([f"{path}: {key!r} is {_brief(value)}, not an object of {what}"])
    return data


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def tree_digest(digests: dict[str, str]) -> str:
    """One digest over all files: sha256 of ``sha256sum``-style lines, sorted by path."""
    lines = "".join(f"{digests[p]}  {p}\n" for p in sorted(digests))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def load_case(
    case_json: Path, root: Path, seen: Digests | None = None, present: set[str] | None = None
) -> tuple[Case | None, list[str]]:
    """Load one case; return it (or ``None``) and its problems.

    With ``seen``, the digest of every file read is kept there (``read_file``).
    ``present``: every file of the corpus by its path from ``root`` (``gate.tree``),
    read instead of asking the file system about each file a case may have.
    """
    seen = {} if seen is None else seen

    def name() -> str:  # worked out only for a problem: it resolves the working folder
        return _shown(case_json, root)

    try:
        text = read_text(case_json, root, seen)
        data = parse_json(text, case_json)
    except OSError as exc:
        return None, [f"{name()}: cannot read: {exc.strerror or exc}"]
    except UnsafeFile as exc:
        return None, [str(exc)]
    try:
        problem = schema_problem("case", data, text)
    except RecursionError:  # read_json bounds the depth; this is the last guard
        problem = "nested too deep to check"
    if problem:
        return None, [f"{name()}: {problem}"]
    folder_rel = case_json.parent.relative_to(root).as_posix()
    folder_id = folder_rel.removeprefix("cases/")
    problems = [f"{name()}: {found}" for found in header_problems(data["response"]["headers"])]
    problems += [f"{name()}: {found}" for found in _float_integers(data)]
    if data["id"] != folder_id:
        problems.append(f"{name()}: id {data['id']!r} does not match its folder {folder_id!r}")
    body_path = case_json.parent / data["response"]["body"]
    try:
        body = read_file(body_path, root, seen)
    except OSError:
        return None, [*problems, f"{name()}: body file {data['response']['body']!r} is missing"]
    except UnsafeFile as exc:
        return None, [*problems, str(exc)]
    chunks_path = case_json.parent / "chunks.json"

    def exists(name: str) -> bool:  # a file of the case's folder
        if present is None:
            return (case_json.parent / name).exists()
        return f"{folder_rel}/{name}" in present

    has_chunks = exists("chunks.json")
    if has_chunks or present is None:  # (a link there was refused by the listing)
        chunks_problem = _check_chunks(chunks_path, root, len(body), seen)
        if chunks_problem:
            problems.append(f"{_shown(chunks_path, root)}: {chunks_problem}")
    others = {"response.sse", "response.json", "response.body"} - {body_path.name}
    for other in sorted(others):
        if exists(other):
            problems.append(f"{name()}: stray body file {other!r} beside {body_path.name!r}")
    digest = seen[str(case_json)]
    files = CaseFiles(
        case_json.parent, bytes.fromhex(digest), body_path.name, bytes.fromhex(seen[str(body_path)])
    )
    return Case.from_files(files, data, has_chunks), problems


def header_problems(headers: dict[str, Any]) -> list[str]:
    """Header values that no HTTP server may send: control characters (CR, LF, NUL…).

    RFC 9110 §5.5: a field value is visible characters, spaces and tabs; a CR
    or LF in one would end the header early on the wire (header injection).
    """
    return [
        f"header {name!r} has a control character in its value {value!r}"
        for name, value in headers.items()
        if isinstance(value, str) and _CONTROL.search(value)
    ]


#: The fields of a case the schema types "integer", which JSON Schema lets be
#: written ``5.0`` or ``1e3`` (a number with no fraction is an integer there).
_INTEGERS = (("response", "status"), ("fault", "after_byte"))


def _float_integers(data: dict[str, Any]) -> list[str]:
    """The integer fields written as floats: what the schema takes, the case's readers may not."""
    return [
        f"{outer}.{inner} is {value!r}, not an integer: write it with no fraction nor exponent"
        for outer, inner in _INTEGERS
        if isinstance(value := (data.get(outer) or {}).get(inner), float)
    ]


# A control character, but the tab a field value may hold.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def _check_chunks(path: Path, root: Path, body_size: int, seen: Digests | None) -> str | None:
    """What is wrong with an optional ``chunks.json``, so a run never trips on it."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        chunks = read_chunks(path, root, seen)
    except UnsafeFile as exc:
        return str(exc).removeprefix(f"{path}: ")
    except ValueError as exc:
        return str(exc)
    sizes = chunks.get("sizes")
    if not isinstance(sizes, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in sizes
    ):
        return "'sizes' must be a list of positive integers"
    if sum(sizes) != body_size:
        return f"'sizes' add up to {sum(sizes)} bytes, the body has {body_size}"
    delays = chunks.get("delays_ms", [])
    if not isinstance(delays, list) or not all(_is_delay(ms) for ms in delays):
        return "'delays_ms' must be a list of non-negative numbers of milliseconds"
    if "delays_ms" in chunks and len(delays) != len(sizes):
        return f"'delays_ms' has {len(delays)} entries, 'sizes' has {len(sizes)}"
    return None


def _is_delay(ms: Any) -> bool:
    return (
        isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms) and ms >= 0
    )


def scan(root: Path, seen: Digests | None = None) -> tuple[str, list[Case], list[str]]:
    """Every case that loads, and one line per problem found on the way.

    With ``seen``, the digest of every file read is kept there (``read_file``).
    """
    found = _scan(root, seen)
    return found.version, found.cases, found.problems


@dataclass
class _Scanned:
    """What ``_scan`` found: ``scan``'s three, the listing it read the cases by, and
    with ``cached`` the corpus digest when the cases came from the cache."""

    version: str
    cases: list[Case]
    problems: list[str]
    listing: Listing = field(default_factory=list)
    digest: str | None = None


def _scan(root: Path, seen: Digests | None, *, cached: bool = False) -> _Scanned:
    """``scan``; with ``cached``, the cases of an unchanged listing from ``load_cache``."""
    if not (root / "cases").is_dir():
        return _Scanned("", [], [f"{_shown(root, root)}: not a corpus (no cases/ folder)"])
    try:
        listing, folders = tree(root)  # a link or a special file anywhere stops the load
        if cached and (hit := cached_load(root, listing)) is not None:
            return _Scanned(hit[0], hit[1], [], listing, hit[2])
        version = read_text(root / "VERSION", root, seen).strip()
    except OSError:
        return _Scanned("", [], [f"{_shown(root / 'VERSION', root)}: missing"])
    except UnsafeFile as exc:
        return _Scanned("", [], [str(exc)])
    cases: list[Case] = []
    problems = _format_problems(root, seen)
    present = {name for name, _ in listing}
    for rel in folders:  # cases/PROVIDER/CASE, in the order of their parts
        if not rel.startswith("cases/") or rel.count("/") != 2:
            continue
        folder = root / rel
        if f"{rel}/case.json" not in present:
            problems.append(f"{_shown(folder, root)}: case folder without case.json")
            continue
        case, found = load_case(folder / "case.json", root, seen, present)
        problems.extend(found)
        if case is not None:
            cases.append(case)
    if not cases and not problems:
        problems.append(f"{_shown(root, root)}: the corpus has no cases")
    return _Scanned(version, cases, problems, listing)


#: The corpus format this streamproof reads (corpus/README.md, "Corpus format").
CORPUS_FORMAT = "2"


def _format_problems(root: Path, seen: Digests | None) -> list[str]:
    """One line when the corpus is not of the format this streamproof reads."""
    shown = _shown(root / "FORMAT", root)
    try:
        found = read_text(root / "FORMAT", root, seen).strip()
    except OSError:
        return [
            f"{shown}: missing; a corpus of format 1 (before corpus 2.0.0) has no evidence "
            "in its cases: see corpus/README.md, 'Migrating from format 1'"
        ]
    except UnsafeFile as exc:
        return [str(exc)]
    if found != CORPUS_FORMAT:
        return [f"{shown}: format {found[:20]!r} is not one this streamproof reads ({CORPUS_FORMAT})"]
    return []


def load_corpus(root: Path | None = None, *, cached: bool = True) -> Corpus:
    """Load and schema-check every case; raise ``CorpusError`` on any problem.

    A corpus whose listing is the very one a clean load kept (``load_cache``)
    is taken from the cache without reading a file, unless not ``cached``.
    """
    root = (root or default_root()).resolve()
    seen: Digests = {}
    began = time.time_ns()  # (the wall clock, as file times are kept)
    found = _scan(root, seen, cached=cached)
    if found.problems:
        raise CorpusError(found.problems)
    digest = found.digest
    if digest is None:
        # Taken now, of the bytes the load read (each file once): the digest
        # names the corpus the run uses even if the folder changes later.
        files = [name for name, _ in found.listing]
        digest = tree_digest(file_digests(root, seen, files))
        keep_load(root, found.listing, began, found.version, found.cases, digest)
    return Corpus(root, found.version, found.cases, digest)


def _shown(path: Path, root: Path) -> str:
    """The path as a user would type it: relative to the working folder when inside it."""
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)
