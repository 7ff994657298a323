"""One case of a corpus: what a run plans with, and its files read back when needed.

``Case`` is built in memory (fuzzing, a recording) or by the loader
(``streamproof.corpus.cases``), which keeps only the sha256 of the files it
checked and lets the case read them again, unchanged, when it runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..errors import CorpusError
from .gate import UnsafeFile, parse_json, read_file

__all__ = ["Case", "CaseFiles", "expectation_digest"]

_T = TypeVar("_T")


def expectation_digest(data: dict[str, Any]) -> str:
    """sha256 of a case's expectation in canonical JSON (sorted keys, no spaces)."""
    key = "expected" if "expected" in data else "expected_any"
    canonical = json.dumps(
        {key: data.get(key)}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Case:
    """One case: its metadata, expectation and exact body bytes.

    A case built in memory (``Case(id, dir, data, body)``: fuzzing, a
    recording) holds everything. A case loaded from a corpus holds only what
    planning a run reads (its id, provider, severity, needs, the digest of its
    expectation); its ``data`` and ``body`` are read again from its files when
    asked for, through the gate, and must be the very bytes the load checked:
    their sha256 is kept, and a file changed since is a ``CorpusError``. The
    last few cases read are kept (``_RECENT``), so that the transports of one
    case read its files once. A corpus ten times the size then needs little
    more memory than its case runs.
    """

    __slots__ = (
        "_body",
        "_data",
        "derived",
        "_has_chunks",
        "_files",
        "dir",
        "expected_sha256",
        "id",
        "provider",
        "requires",
        "runnable",
        "severity",
    )

    id: str
    dir: Path
    provider: str
    severity: str
    requires: frozenset[str]
    #: A recorded case counts only once a person has reviewed it (corpus/README.md).
    runnable: bool
    expected_sha256: str
    #: Small facts other layers derive from ``data`` (the groups a run plans,
    #: ``harness.projection``), kept so that planning never reads a case back.
    derived: dict[str, Any]

    def __init__(self, id: str, dir: Path, data: dict[str, Any], body: bytes) -> None:
        self.id = id
        self.dir = dir
        self._data: dict[str, Any] | None = data
        self._body: bytes | None = body
        self._files: CaseFiles | None = None
        self._has_chunks: bool | None = None
        self.derived = {}
        self._plan_with(data)

    @classmethod
    def from_files(cls, files: CaseFiles, data: dict[str, Any], has_chunks: bool) -> Case:
        """A case of a loaded corpus: ``data`` is read once more when asked for."""
        case = cls.__new__(cls)
        case.id = str(data["id"])
        case.dir = files.folder
        case._data = case._body = None
        case._files = files
        case._has_chunks = has_chunks
        case.derived = {}
        case._plan_with(data)
        return case

    @classmethod
    def from_facts(
        cls,
        files: CaseFiles,
        *,
        has_chunks: bool,
        id: str,
        provider: str,
        severity: str,
        requires: frozenset[str],
        runnable: bool,
        expected_sha256: str,
    ) -> Case:
        """A case of a loaded corpus made from what an earlier load found of the very
        same files (``corpus.load_cache``); ``data`` is read when asked for."""
        case = cls.__new__(cls)
        case.id = id
        case.dir = files.folder
        case._data = case._body = None
        case._files = files
        case._has_chunks = has_chunks
        case.derived = {}
        case.provider = _shared(provider)
        case.severity = _shared(severity)
        case.requires = _shared(requires)
        case.runnable = runnable
        case.expected_sha256 = expected_sha256
        return case

    @property
    def files(self) -> CaseFiles | None:
        """The files a loaded case reads back, with the sha256 the load kept; ``None``
        for a case built in memory."""
        return self._files

    def _plan_with(self, data: dict[str, Any]) -> None:
        self.provider = _shared(str(data["provider"]))
        self.severity = _shared(str(data["severity"]))
        self.requires = _shared(frozenset(data["requires"]))
        provenance = data["provenance"]
        self.runnable = provenance["kind"] != "recorded" or bool(provenance.get("reviewed_by"))
        self.expected_sha256 = expectation_digest(data)

    def __repr__(self) -> str:
        return f"Case(id={self.id!r}, dir={self.dir!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Case):
            return NotImplemented
        return (self.id, self.dir, self.data, self.body) == (
            other.id,
            other.dir,
            other.data,
            other.body,
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def data(self) -> dict[str, Any]:
        """The case's ``case.json``."""
        if self._data is not None:
            return self._data
        assert self._files is not None
        return _read_back(self._files)[0]

    @property
    def body(self) -> bytes:
        """The exact bytes of its body file."""
        if self._body is not None:
            return self._body
        assert self._files is not None
        return _read_back(self._files)[1]

    @property
    def title(self) -> str:
        return str(self.data["title"])

    @property
    def status(self) -> int:
        return int(self.data["response"]["status"])

    @property
    def headers(self) -> dict[str, str]:
        return dict(self.data["response"]["headers"])

    @property
    def request(self) -> dict[str, Any]:
        return dict(self.data["request"])

    @property
    def alternatives(self) -> list[dict[str, Any]]:
        """The acceptable expectations: one for ``expected``, several for ``expected_any``."""
        data = self.data
        if "expected" in data:
            return [data["expected"]]
        return list(data["expected_any"])

    @property
    def fault(self) -> dict[str, Any] | None:
        """The connection fault of a ``wire/`` case (``kind``, ``after_byte``), else ``None``."""
        fault = self.data.get("fault")
        return dict(fault) if fault is not None else None

    @property
    def has_chunks(self) -> bool:
        if self._has_chunks is None:
            return (self.dir / "chunks.json").exists()
        return self._has_chunks


@dataclass(frozen=True, eq=False)
class CaseFiles:
    """Where a loaded case's files are, and the sha256 of the bytes the load read.

    Each load makes its own, and each is its own key in ``_RECENT`` (hashed by
    identity, as cheap as a lookup can be): a corpus loaded again never finds
    the bytes of an earlier load.
    """

    folder: Path  # the case's folder (its ``dir``: one object for both)
    case_json_sha256: bytes
    body: str  # the body file's name in the folder
    body_sha256: bytes


# Many cases share a provider, a severity and a set of needs: one object each.
_SHARED: dict[Any, Any] = {}


def _shared(value: _T) -> _T:
    return _SHARED.setdefault(value, value)  # type: ignore[no-any-return]


# The cases read back most recently, newest last, by their files (CaseFiles).
# At most _RECENT_SIZE of them, and past _RECENT_BYTES of bodies only the newest.
_RECENT: OrderedDict[CaseFiles, tuple[dict[str, Any], bytes]] = OrderedDict()
_RECENT_SIZE = 8
_RECENT_BYTES = 64 * 1024 * 1024
_recent_lock = threading.Lock()


def _read_back(files: CaseFiles) -> tuple[dict[str, Any], bytes]:
    """A loaded case's ``case.json`` and body, as the load read them, or ``CorpusError``."""
    with _recent_lock:
        found = _RECENT.get(files)
        if found is not None:
            _RECENT.move_to_end(files)
            return found
    case_json = os.path.join(files.folder, "case.json")
    text = _read_unchanged(case_json, files.case_json_sha256)
    body = _read_unchanged(os.path.join(files.folder, files.body), files.body_sha256)
    try:
        data = parse_json(text.decode("utf-8"), case_json)
    except (UnicodeDecodeError, UnsafeFile) as exc:  # (the digest matched: not expected)
        raise CorpusError([f"{case_json}: {exc}"]) from None
    with _recent_lock:
        _RECENT[files] = (data, body)
        while len(_RECENT) > 1 and (
            len(_RECENT) > _RECENT_SIZE
            or sum(len(kept) for _, kept in _RECENT.values()) > _RECENT_BYTES
        ):
            _RECENT.popitem(last=False)
    return data, body


def _read_unchanged(path: str, sha256: bytes) -> bytes:
    # The gate without its walk up the folders: whatever a link among them
    # led to, bytes other than those the load checked are refused here.
    try:
        data = read_file(path)
    except OSError as exc:
        raise CorpusError([f"{path}: cannot read it again: {exc.strerror or exc}"]) from None
    except UnsafeFile as exc:
        raise CorpusError([str(exc)]) from None
    if hashlib.sha256(data).digest() != sha256:
        raise CorpusError([f"{path}: changed since the corpus was loaded (its sha256 differs)"])
    return data
