"""Transports: the ways a body is cut into reads (CONTRACT §5).

A transport is a list of chunk end offsets into the body, so the same
boundaries can be replayed in-process, sent to a subprocess and shown.
"""

from __future__ import annotations

import random
from pathlib import Path

from ..corpus.gate import read_chunks

__all__ = ["TRANSPORTS", "boundaries", "parse_transports", "split"]

TRANSPORTS = ("whole", "lines", "bytes", "random", "recorded")


def parse_transports(value: str) -> list[str]:
    """``all`` or a comma list of transport names; ``ValueError`` names the bad ones."""
    if value == "all":
        return list(TRANSPORTS)
    # A name given twice is one transport: each case runs once per transport.
    names = list(dict.fromkeys(t.strip() for t in value.split(",") if t.strip()))
    unknown = [t for t in names if t not in TRANSPORTS]
    if unknown or not names:
        raise ValueError(
            f"unknown transport {unknown or value!r}; choose from all, {', '.join(TRANSPORTS)}"
        )
    return names


def boundaries(
    body: bytes, transport: str, *, seed: int = 0, case_dir: Path | None = None
) -> list[int]:
    """The end offset of every chunk of ``body`` under ``transport``."""
    if not body:
        return []
    if transport == "whole":
        return [len(body)]
    if transport == "bytes":
        return list(range(1, len(body) + 1))
    if transport == "lines":
        return _lines(body)
    if transport == "random":
        return _random(body, seed)
    if transport == "recorded":
        return _recorded(body, case_dir)
    raise ValueError(f"unknown transport {transport!r}")


def split(body: bytes, ends: list[int]) -> list[bytes]:
    """The chunks that ``ends`` cut ``body`` into."""
    chunks, start = [], 0
    for end in ends:
        chunks.append(body[start:end])
        start = end
    return chunks


def _lines(body: bytes) -> list[int]:
    # A read ends after every CR and every LF, so a CRLF is always split
    # between two reads: the hardest case of WHATWG §9.2.6 line ends.
    ends = [i + 1 for i, byte in enumerate(body) if byte in (0x0A, 0x0D)]
    if not ends or ends[-1] != len(body):
        ends.append(len(body))
    return ends


def _random(body: bytes, seed: int) -> list[int]:
    # Seeded per body, so a case's cuts do not depend on which cases ran before.
    rng = random.Random(f"{seed}:{len(body)}:{body[:64]!r}")
    ends, at = [], 0
    while at < len(body):
        at = min(len(body), at + rng.choice((1, 1, 2, 3, 5, 8, 13, 64, 512)))
        ends.append(at)
    return ends


def _recorded(body: bytes, case_dir: Path | None) -> list[int]:
    if case_dir is None or not (case_dir / "chunks.json").exists():
        raise ValueError("the recorded transport needs the case's chunks.json")
    sizes = read_chunks(case_dir / "chunks.json").get("sizes")
    if not isinstance(sizes, list):
        raise ValueError("chunks.json has no list of 'sizes'")
    ends, at = [], 0
    for size in sizes:
        at += size
        ends.append(at)
    if at != len(body):
        raise ValueError(f"chunks.json covers {at} bytes, the body has {len(body)}")
    return ends
