"""One case, in this process: the response an adapter's ``parse`` receives.

``replay(case_id, transport=...)`` builds exactly the ``ReplayResponse`` the
worker would hand the adapter for that case under that transport (same
status, headers, request and reads), so a parser author can call their
``parse`` on it in a debugger or a notebook::

    import streamproof
    response = streamproof.replay("sse-spec/crlf-line-endings", transport="bytes")
    outcome = my_adapter.parse(response)

``debug_run`` does the same through a loaded adapter and judges the outcome
the way a run does. Nothing here starts a process or catches the adapter's
exceptions: that is the point of debugging in the foreground.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..corpus.cases import Case, Corpus, load_corpus
from ..errors import UsageError
from .engine import Result, judge
from .loader import Adapter, ReplayResponse
from .selection import split_run_id
from .transports import TRANSPORTS, boundaries

__all__ = ["Replay", "find_case", "replay", "replay_case"]


@dataclass(frozen=True)
class Replay:
    """A case under one transport: its response and the read boundaries."""

    case: Case
    transport: str
    ends: list[int]

    def response(self) -> ReplayResponse:
        """A fresh response (a response is read once, like a socket)."""
        return ReplayResponse(
            status=self.case.status,
            headers=self.case.headers,
            request=self.case.request,
            case_id=self.case.id,
            transport=self.transport,
            body=self.case.body,
            ends=self.ends,
        )

    def run(self, adapter: Adapter) -> tuple[Any, Result]:
        """Call ``adapter``'s ``parse`` here (exceptions propagate) and judge its outcome
        on what the adapter exposes, as a run does (semantics §12.6)."""
        outcome = adapter.run(self.response())
        claims = "incremental" in adapter.capabilities
        result = judge(
            self.case,
            self.transport,
            outcome,
            0.0,
            self.ends,
            claims_incremental=claims,
            capabilities=adapter.capabilities,
        )
        return outcome, result


def find_case(case_id: str, corpus: Corpus | Path | None = None) -> tuple[Case, str | None]:
    """The case named ``case_id`` (or a run id as printed: ``case [transport]``)."""
    loaded = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    name, transport = split_run_id(case_id)
    case = next((c for c in loaded.cases if c.id == name), None)
    if case is None:
        raise UsageError(f"no case {name!r} (see 'streamproof list')")
    return case, transport


def replay_case(case: Case, transport: str = "whole", *, seed: int = 1) -> Replay:
    """``case`` under ``transport``; ``UsageError`` for a transport it cannot have."""
    if transport not in TRANSPORTS:
        raise UsageError(f"unknown transport {transport!r}; choose from {', '.join(TRANSPORTS)}")
    if transport == "recorded" and not case.has_chunks:
        raise UsageError(f"{case.id} has no recorded reads (no chunks.json)")
    return Replay(case, transport, boundaries(case.body, transport, seed=seed, case_dir=case.dir))


def replay(
    case_id: str,
    transport: str | None = None,
    *,
    seed: int = 1,
    corpus: Corpus | Path | None = None,
) -> ReplayResponse:
    """The response ``parse`` receives for ``case_id`` under ``transport`` (default
    ``whole``, or the transport named in a run id such as ``'a/b [bytes]'``)."""
    case, named = find_case(case_id, corpus)
    return replay_case(case, transport or named or "whole", seed=seed).response()
