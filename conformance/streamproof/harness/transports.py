"""Transports: the ways a body is cut into reads (docs/protocol.md, Boundaries).

A transport is a list of chunk end offsets into the body, so the same
boundaries can be replayed in-process, sent to a subprocess and shown.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from pathlib import Path

from ..corpus.gate import read_chunks

__all__ = [
    "DEFAULT_SEED",
    "MAX_SEEDS",
    "TRANSPORTS",
    "boundaries",
    "draw_seed",
    "parse_seed",
    "parse_seeds",
    "parse_transports",
    "seed_words",
    "split",
]

TRANSPORTS = ("whole", "lines", "bytes", "random", "recorded")
#: The seed of the random transport when none is given: a plain run is
#: reproducible, and reproduces the committed baselines, the nightly script
#: and the composite action, which all use it.
DEFAULT_SEED = 1
#: The most seeds one run explores (``--seeds``).
MAX_SEEDS = 1000
_SEED_LIMIT = 2**31


def draw_seed() -> int:
    """A new seed, for ``--seed random``."""
    return random.randrange(_SEED_LIMIT)


def seed_words(seeds: Iterable[int]) -> str:
    """``seed 4`` or ``seeds 3, 4``."""
    listed = list(seeds)
    return f"seed{'s' * (len(listed) != 1)} {', '.join(map(str, listed))}"


def parse_seed(value: str) -> int | None:
    """``N`` (a seed) or ``random`` (``None``: draw one); ``ValueError`` otherwise."""
    text = value.strip()
    if text == "random":
        return None
    if not text.isdigit() or int(text) >= _SEED_LIMIT:
        raise ValueError(
            f"{value!r} is not a seed: give a whole number from 0 to {_SEED_LIMIT - 1} or 'random'"
        )
    return int(text)


def parse_seeds(spec: str) -> list[int]:
    """The seeds of ``1-20``, ``1,5,9`` or ``1-5,9``, sorted, each once (else ``ValueError``)."""
    seeds: set[int] = set()
    for part in spec.split(","):
        low, dash, high = part.strip().partition("-")
        try:
            first = parse_seed(low)
            last = parse_seed(high) if dash else first
        except ValueError:
            first = last = None
        if first is None or last is None or last < first:
            raise ValueError(
                f"{spec!r}: give seeds as a range (1-20), a list (1,5,9) or both (1-5,9)"
            )
        if last - first + len(seeds) >= MAX_SEEDS:
            raise ValueError(f"{spec!r}: more than {MAX_SEEDS} seeds")
        seeds.update(range(first, last + 1))
    return sorted(seeds)


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


_LINE_END = re.compile(rb"[\r\n]")


def _lines(body: bytes) -> list[int]:
    # A read ends after every CR and every LF, so a CRLF is always split
    # between two reads: the hardest case of WHATWG §9.2.6 line ends.
    ends = [match.end() for match in _LINE_END.finditer(body)]
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
