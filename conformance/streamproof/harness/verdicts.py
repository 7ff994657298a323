"""A verdict and the result that carries it: one case under one transport.

Results cross process boundaries (xdist workers, the results JSON) as
dictionaries; ``as_dict`` bounds every string it writes and ``from_dict``
reads them back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any

from ..corpus.cases import Case
from .comparison import Divergence
from .crash_site import Frame, at_byte_from, frames_from
from .crash_site import raised_in as _raised_in

__all__ = ["DISPLAY_LIMIT", "JSON_VALUE_LIMIT", "Result", "Verdict", "shorten"]


# A divergence or message shown to a person stops after this many characters
# (a 10 MB outcome must not make a 10 MB terminal line or HTML cell).
DISPLAY_LIMIT = 500
# A string value in the results JSON (a mismatch's expected or actual, a
# message) keeps at most this many characters (docs/cli.md, "Isolation and timeouts").
JSON_VALUE_LIMIT = 1 << 20


def shorten(text: str, limit: int) -> str:
    """``text`` cut at ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text) - limit} more)"


def _bounded(value: Any) -> Any:
    """``value`` with every string in it shortened to ``JSON_VALUE_LIMIT``."""
    if isinstance(value, str):
        return shorten(value, JSON_VALUE_LIMIT)
    if isinstance(value, list):
        return [_bounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _bounded(v) for k, v in value.items()}
    return value


class Verdict(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    CRASH = "crash"
    TIMEOUT = "timeout"
    XFAIL = "xfail"
    XPASS = "xpass"


@dataclass(frozen=True, slots=True)
class Result:
    """The verdict on one case under one transport."""

    case: Case
    transport: str
    verdict: Verdict
    mismatches: list[Divergence] = field(default_factory=list)
    message: str = ""
    seconds: float = 0.0
    outcome: dict[str, Any] | None = None
    #: Under the random transport, the seeds the case failed and passed under
    #: (``{"failing": [...], "passing": [...]}``), when several seeds ran or a
    #: known failure names seeds; ``None`` otherwise.
    seeds: dict[str, list[int]] | None = None

    @property
    def partial(self) -> bool:
        """Whether the case failed under some seeds and passed under others."""
        return bool(self.seeds and self.seeds["failing"] and self.seeds["passing"])

    output: str = ""  # what the adapter printed during this case (its last 64 KiB)
    incremental: bool = False  # the deltas were checked (semantics §11)
    traceback: str = ""  # for a crash the adapter reported: where it raised (adapter frames)
    #: Each field group compared (semantics §12.6): ``{"content": "pass", "usage": "fail"}``.
    groups: dict[str, str] | None = None
    #: The groups the case states that were not judged: not exposed, or left out
    #: by a precondition.
    not_exposed: tuple[str, ...] = ()
    #: For a crash the adapter reported: where it raised, outermost first, and
    #: how many body bytes it had been handed then (docs/protocol.md).
    frames: tuple[Frame, ...] = ()
    at_byte: int | None = None

    @property
    def raised_in(self) -> Frame | None:
        """The innermost frame outside the runtime's own library and streamproof."""
        return _raised_in(self.frames)

    @property
    def first_divergence(self) -> str:
        """The first divergence (or the message), at most ``DISPLAY_LIMIT`` characters."""
        text = str(self.mismatches[0]) if self.mismatches else self.message
        return shorten(text, DISPLAY_LIMIT)

    @classmethod
    def from_dict(cls, data: dict[str, Any], case: Case) -> Result:
        """The result ``as_dict`` wrote (it crosses process boundaries as JSON)."""
        mismatches = [Divergence.from_dict(m) for m in data["mismatches"]]
        return cls(
            case,
            data["transport"],
            Verdict(data["verdict"]),
            mismatches,
            data.get("message", ""),
            data["seconds"],
            seeds=data.get("seeds"),
            output=data.get("output", ""),
            traceback=data.get("traceback", ""),
            incremental=data.get("incremental", False),
            groups=data.get("groups"),
            not_exposed=tuple(data.get("not_exposed", ())),
            frames=frames_from(data.get("frames")),
            at_byte=at_byte_from(data.get("at_byte")),
        )

    def without_outcome(self) -> Result:
        """This result, the outcome dropped (the verdict and its reasons stay)."""
        return self if self.outcome is None else replace(self, outcome=None)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "case": self.case.id,
            "transport": self.transport,
            "verdict": self.verdict.value,
            "severity": self.case.severity,
            "expected_sha256": self.case.expected_sha256,
            "mismatches": [_bounded(m.as_dict()) for m in self.mismatches],
            "seconds": round(self.seconds, 6),
        }
        if self.message:
            data["message"] = shorten(self.message, JSON_VALUE_LIMIT)
        if self.seeds is not None:
            data["seeds"] = self.seeds
        if self.output:
            data["output"] = self.output
        site = self.raised_in
        if site is not None:
            data["raised_in"] = site.as_dict()
        if self.traceback:
            data["traceback"] = self.traceback
        if self.frames:
            data["frames"] = [frame.as_dict() for frame in self.frames]
        if self.at_byte is not None:
            data["at_byte"] = self.at_byte
        if self.incremental:
            data["incremental"] = True
        if self.groups is not None:
            data["groups"] = self.groups
        data["not_exposed"] = list(self.not_exposed)
        return data
