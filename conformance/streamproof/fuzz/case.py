"""A drawn response as a corpus case: judged in memory, written as a candidate.

The case has the corpus's format (``schemas/case.schema.json``), the model's
expected outcome and ``synthetic`` provenance. It is written to a folder the
user names, never into the shipped corpus: that folder becomes a corpus of
its own (``VERSION``, ``FORMAT``, ``manifest.json``), so ``validate``,
``show``, ``run --corpus`` and ``debug`` take it as it is, and a person
reviews a candidate there before moving it.
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from ..corpus.cases import CORPUS_FORMAT, Case
from ..corpus.validate import needed_capabilities, write_manifest
from ..harness.loader import CAPABILITIES
from ..harness.projection import plan_groups
from .model import Response, claimed, outcomes, requires
from .render import QUIRKS, Wire, render

__all__ = [
    "CANDIDATES_VERSION",
    "event_count",
    "judgeable",
    "replay_transport",
    "to_case",
    "write_candidate",
]

#: ``VERSION`` of a folder of candidates: a corpus, but no release of one.
CANDIDATES_VERSION = "0.0.0"

SPEC = {
    "stream": ["semantics §3", "semantics §5"],
    "json": ["semantics §9"],
    "http-error": ["semantics §8.5"],
}


def judgeable(response: Response, capabilities: frozenset[str]) -> bool:
    """Whether an adapter with ``capabilities`` is judged on anything of ``response``:
    the rules of a run (docs/semantics.md §12.6), preconditions included."""
    plan = plan_groups(to_case(response, capabilities), capabilities)
    return not plan.gap and bool(plan.exposed)


def to_case(
    response: Response, capabilities: frozenset[str], *, case_id: str = "generic/fuzz"
) -> Case:
    """The case of ``response``, expecting only what the adapter claims."""
    wire = render(response)
    alternatives = [claimed(o, capabilities) for o in outcomes(response)]
    data: dict[str, Any] = {
        "id": case_id,
        "title": "fuzz",
        "provider": case_id.split("/")[0],
        "model": response.model,
        "provenance": {"kind": "synthetic", "source": "streamproof fuzz", "observed": _today()},
        "evidence": fuzz_evidence(SPEC[response.kind]),
        "request": wire.request,
        "response": {"status": wire.status, "headers": wire.headers, "body": wire.body_name},
        "requires": sorted(requires(response) & capabilities),
        "severity": "may",  # no shape known (docs/evidence.md)
        "tags": sorted(response.quirks & set(QUIRKS)),
        "spec": SPEC[response.kind],
    }
    if len(alternatives) == 1:
        data["expected"] = alternatives[0]
    else:
        data["expected_any"] = alternatives
    return Case(case_id, Path("fuzz"), data, wire.body)


def fuzz_evidence(spec: list[str]) -> dict[str, Any]:
    """The evidence of a drawn response: no server was seen sending it, and its
    expectation is the fuzzer's model of the semantics (docs/evidence.md)."""
    sections = [ref for ref in spec if ref.startswith("semantics §")]
    return {
        "shape": [{"kind": "none", "note": "drawn by streamproof fuzz; no server seen sending it"}],
        "reading": {"basis": "project", "section": ", ".join(sections) or "semantics §12"},
    }


def _today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "adapter"


def replay_transport(ends: list[int]) -> str:
    """The transport that replays a candidate cut at ``ends``: its ``chunks.json``
    (``recorded``) when the reads matter, else ``whole``."""
    return "recorded" if len(ends) > 1 else "whole"


def write_candidate(
    out: Path,
    response: Response,
    ends: list[int],
    *,
    adapter: str,
    seed: int,
    example: int,
    divergence: str,
) -> Path:
    """Write the case folder of a shrunk disagreement under ``out``; its path.

    ``out`` is a corpus once the first candidate is in: its ``VERSION`` and
    ``FORMAT`` are made with the first, its manifest is written anew with each.
    """
    slug = f"fuzz-{_slug(adapter)}-seed{seed}-{example}"
    folder = _fresh_folder(out, slug)
    case = to_case(response, frozenset(CAPABILITIES), case_id=f"generic/{slug}")
    wire: Wire = render(response)
    events = event_count(response)
    data = dict(case.data)
    # The full outcome of the model is stated, so every capability it needs is
    # required (``validate`` checks it); a run judges what the adapter exposes.
    data["requires"] = sorted(needed_capabilities(case) | case.requires)
    data["title"] = f"fuzz finding: {_slug(divergence.split(':')[0]) or 'outcome'} differs"[:69]
    data["comment"] = (
        f"Found by `streamproof fuzz --adapter {adapter} --seed {seed}` (example {example}) and "
        f"shrunk to {events} event(s) in {len(ends)} read(s). The adapter's first divergence "
        f"from the abstract model, under the {replay_transport(ends)} transport: {divergence}. "
        "The expectation comes from the fuzzer's model "
        "of the response (docs/semantics.md), not from any parser: review it field by field "
        "before moving this folder into corpus/cases/."
    )
    data["provenance"] = {
        "kind": "synthetic",
        "source": f"streamproof fuzz --adapter {adapter} --seed {seed}, example {example}",
        "observed": _today(),
    }
    _create(folder / "case.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    _create(folder / wire.body_name, wire.body)
    if len(ends) > 1:
        sizes = [b - a for a, b in zip([0, *ends[:-1]], ends, strict=True)]
        _create(folder / "chunks.json", json.dumps({"sizes": sizes}) + "\n")
    write_manifest(out)
    return folder


def _fresh_folder(out: Path, slug: str) -> Path:
    """The candidate folder ``out/cases/generic/slug``, made now: the folders on
    the way are taken only if they are folders (not links), the last one only if
    it did not exist (a path planted there is refused, ``OSError``). ``out``
    gets its ``VERSION`` and ``FORMAT`` the first time."""
    out.parent.mkdir(parents=True, exist_ok=True)
    _own_folder(out)
    for name, text in (("VERSION", CANDIDATES_VERSION), ("FORMAT", CORPUS_FORMAT)):
        _create_once(out / name, text + "\n")
    folder = out
    for name in ("cases", "generic"):
        _own_folder(folder)
        folder = folder / name
    _own_folder(folder)
    folder = folder / slug
    os.mkdir(folder)
    return folder


def _own_folder(path: Path) -> None:
    """Make the folder ``path``, or take it if it is one already (never a link)."""
    try:
        os.mkdir(path)
    except FileExistsError:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise OSError(
                errno.ENOTDIR, "is not a folder (a link?); not written", str(path)
            ) from None


def _create(path: Path, content: str | bytes) -> None:
    """Write the new file ``path``: created now, never through a link or over a file."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    with open(fd, "wb") as file:
        file.write(data)


def _create_once(path: Path, content: str) -> None:
    """Create ``path`` as ``_create`` does, or keep it if a plain file is there already
    (this session's, from its first candidate); a link or anything else is refused."""
    try:
        _create(path, content)
    except FileExistsError:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise OSError(
                errno.EEXIST, "is not a plain file (a link?); not written", str(path)
            ) from None


def event_count(response: Response) -> int:
    """Events in the body (a non-streamed body counts as one)."""
    return len(response.events) if response.kind != "http-error" else 1
