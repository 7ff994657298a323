"""What a run judges of a case: its field groups, on what the adapter exposes.

docs/semantics.md §12.6 states the rules; this module
is their one implementation, used by ``run``, the pytest plugin, ``fuzz``,
``debug``, ``diff`` and ``verify``::

    from streamproof.harness.projection import judge_groups, plan_groups

    plan = plan_groups(case, capabilities, in_process=True)
    if plan.gap:            # a precondition left the case out: a capability gap
        ...
    elif not plan.exposed:  # nothing the case states is exposed: skip
        ...
    else:
        groups, divergences = judge_groups(plan, outcome)   # {"content": "pass", ...}

A case states field groups (``content``, ``usage``, ``status``, …); the
adapter exposes those whose capability it declares. Each group the case
states and the adapter exposes is compared on its own, so a parser that
exposes text and usage is judged on the text and usage of every case that
states them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..corpus.cases import Case
from ..corpus.validate import choice_field_capability
from .comparison import MISSING, Divergence, compare, finish_error_tolerated
from .incremental import covers
from .loader import CAPABILITIES  # every name; one that declares none has V1_CAPABILITIES

__all__ = [
    "CAPABILITIES",
    "CHOICE_GROUPS",
    "GROUPS",
    "PROFILES",
    "GroupPlan",
    "choice_key_group",
    "judge_groups",
    "plan_groups",
    "profile_pairs",
    "stated_groups",
]

#: Groups of one choice, each named after (and needing) its capability.
CHOICE_GROUPS = (
    "content",
    "role",
    "reasoning",
    "refusal",
    "finish_reason",
    "tool_calls",
    "function_call",
    "custom_tool_calls",
    "logprobs",
    "audio",
    "annotations",
)
#: Every group, in the order reports list them.
GROUPS = ("status", *CHOICE_GROUPS, "usage", "metadata", "choices", "deltas")
#: The capability a group needs (``status`` needs the signal of its status).
_NEEDS = {
    **{g: g for g in CHOICE_GROUPS},
    "usage": "usage",
    "metadata": "metadata",
    "choices": "multiple_choices",
    "deltas": "incremental",
}

#: Named capability sets with fixed denominators (docs/semantics.md §12.6).
PROFILES: dict[str, frozenset[str]] = {
    # The tutorial parser: data lines, json.loads, the text and the usage.
    "text": frozenset({"content", "usage"}),
    # The README's example adapter.
    "readme": frozenset({"content", "finish_reason", "usage", "stream_error", "truncation"}),
    # Every capability there is (the parts of the chat format added since v1 included).
    "full": CAPABILITIES,
}


def _signal(status: Any, http_status: int) -> str | None:
    """The capability a status rests on (semantics §12.6): ``None`` for ``complete``."""
    if status == "error":
        return "http_error" if http_status >= 400 else "stream_error"
    if status == "truncated":
        return "truncation"
    return None


@dataclass(frozen=True)
class _Alternative:
    """One acceptable expectation, split into the groups it states.

    The expectation itself is read from the case when a run judges it
    (``expected``), not when a run is planned: planning a corpus never reads
    its cases back. ``given`` is an expectation made in memory instead.
    """

    stated: frozenset[str]
    exposed: frozenset[str]  # of stated, what the adapter exposes (status: see ``status_open``)
    status_open: bool  # expected complete: status compared once the reported status is known
    case: Case | None = None
    index: int = 0
    given: dict[str, Any] | None = None

    @property
    def expected(self) -> dict[str, Any]:
        if self.given is not None:
            return self.given
        assert self.case is not None
        return self.case.alternatives[self.index]


@dataclass(frozen=True)
class _Facts:
    """What planning reads of a case, taken from its files once (``Case.derived``)."""

    stated: tuple[frozenset[str], ...]  # per alternative
    statuses: tuple[Any, ...]  # per alternative: its expected status ("complete" if none)
    fault: bool
    status: int
    json_unasked: bool  # a JSON body to a request that did not ask for a stream
    streamed: bool  # the body is a stream the incremental check covers


def _facts(case: Case) -> _Facts:
    found = case.derived.get("plan")
    if found is None:
        data = case.data
        alternatives = case.alternatives
        found = _Facts(
            stated=tuple(stated_groups(expected) for expected in alternatives),
            statuses=tuple(expected.get("status", "complete") for expected in alternatives),
            fault=data.get("fault") is not None,
            status=int(data["response"]["status"]),
            json_unasked=data["response"]["body"] == "response.json"
            and not data["request"].get("stream"),
            streamed=covers(
                int(data["response"]["status"]), data["response"]["headers"], data["request"]
            ),
        )
        case.derived["plan"] = found
    return found


@dataclass(frozen=True)
class GroupPlan:
    """What a run judges of one case for one adapter (before any outcome)."""

    case: Case
    capabilities: frozenset[str]
    gap: str = ""  # the precondition that left the case out: a capability, or "real-connection"
    stated: frozenset[str] = frozenset()  # every group some alternative states
    alternatives: tuple[_Alternative, ...] = ()
    checks_deltas: bool = False  # the incremental check applies (semantics §11)
    not_exposed: frozenset[str] = field(default=frozenset())

    @property
    def exposed(self) -> frozenset[str]:
        """Groups that some alternative compares whatever the outcome."""
        found: set[str] = set()
        for alt in self.alternatives:
            found |= alt.exposed
            if alt.status_open:
                found.add("status")
        if self.checks_deltas:
            found.add("deltas")
        return frozenset(found)

    @property
    def lacking(self) -> list[str]:
        """The capabilities whose absence leaves groups unjudged, for messages: the
        precondition's alone when one left the case out."""
        return [self.gap] if self.gap else self.missing

    @property
    def missing(self) -> list[str]:
        """Every capability the adapter lacks that the case's stated groups need,
        and the precondition's (a capability gap, in results and FINDINGS)."""
        needs = {_NEEDS.get(g, "") for g in self.not_exposed} - {"", *self.capabilities}
        if "status" in self.not_exposed:
            for expected in self.case.alternatives:
                signal = _signal(expected.get("status"), self.case.status)
                if signal and signal not in self.capabilities:
                    needs.add(signal)
        if self.gap:
            needs.add(self.gap)
        return sorted(needs)


def stated_groups(expected: Mapping[str, Any]) -> frozenset[str]:
    """The groups one expectation states (an ``index`` alone states nothing)."""
    found: set[str] = set()
    if "status" in expected or "error" in expected:
        found.add("status")
    if "usage" in expected:
        found.add("usage")
    if "id" in expected or "model" in expected:
        found.add("metadata")
    if "deltas" in expected:
        found.add("deltas")
    choices = expected.get("choices")
    if isinstance(choices, list):
        if len(choices) > 1:
            found.add("choices")
        if choices and isinstance(choices[0], dict):
            found |= {choice_key_group(k, v) for k, v in choices[0].items()} & set(CHOICE_GROUPS)
        for choice in choices[1:]:
            if isinstance(choice, dict) and set(choice) - {"index"}:
                found.add("choices")
    return frozenset(found)


def choice_key_group(key: str, value: Any) -> str:
    """The group (and capability) a key of an expected choice belongs to: its own
    name, but a ``tool_calls`` list holding a custom call is ``custom_tool_calls``
    (semantics §12.6, the rule ``validate`` applies to ``requires`` too)."""
    return choice_field_capability(key, value) or key


def _gap(facts: _Facts, capabilities: frozenset[str], in_process: bool) -> str:
    """The precondition that leaves a case out for these capabilities (semantics §12.6)."""
    if in_process and facts.fault:
        return "real-connection"
    if facts.status >= 400:
        return "" if "http_error" in capabilities else "http_error"
    if facts.json_unasked:
        return "" if "non_streaming" in capabilities else "non_streaming"
    return ""


def plan_groups(
    case: Case,
    capabilities: Iterable[str],
    *,
    in_process: bool = True,
) -> GroupPlan:
    """The groups a run of ``case`` judges for an adapter with ``capabilities``.

    The incremental check of semantics §11 belongs to the run when the adapter
    claims ``incremental`` and the case states deltas, or the run is in-process
    and the body is a stream (over a socket nobody knows how many bytes the
    client had read).
    """
    caps = frozenset(capabilities)
    facts = _facts(case)
    stated: set[str] = set()
    for groups in facts.stated:
        stated |= groups
    if "incremental" in case.requires:  # a case about incremental delivery states the check
        stated.add("deltas")
    gap = _gap(facts, caps, in_process)
    if gap:
        return GroupPlan(case, caps, gap, frozenset(stated), not_exposed=frozenset(stated))
    projected = []
    for index, (groups, status) in enumerate(zip(facts.stated, facts.statuses, strict=True)):
        exposed = {g for g in groups if g != "status" and _NEEDS[g] in caps}
        status_open = False
        if "status" in groups:
            signal = _signal(status, facts.status)
            if signal is None:
                status_open = True
            elif signal in caps:
                exposed.add("status")
        projected.append(_Alternative(groups, frozenset(exposed), status_open, case, index))
    streamed = in_process and facts.streamed
    deltas = "incremental" in caps and (streamed or "deltas" in stated)
    compared: set[str] = set()
    for alt in projected:
        compared |= alt.exposed | ({"status"} if alt.status_open else set())
    if deltas:
        compared.add("deltas")
    return GroupPlan(
        case,
        caps,
        "",
        frozenset(stated),
        tuple(projected),
        checks_deltas=deltas,
        not_exposed=frozenset(stated - compared),
    )


def _choice0(outcome: Mapping[str, Any]) -> Any:
    choices = outcome.get("choices")
    if isinstance(choices, list) and choices:
        return choices[0]
    return MISSING


def _group_expectation(alt: _Alternative, group: str) -> dict[str, Any]:
    """The part of one expectation a group compares (outside the choices)."""
    expected = alt.expected
    if group == "status":
        return {k: expected[k] for k in ("status", "error") if k in expected}
    if group == "usage":
        return {"usage": expected["usage"]}
    if group == "metadata":
        return {k: expected[k] for k in ("id", "model") if k in expected}
    if group == "deltas":
        return {"deltas": expected["deltas"]} if "deltas" in expected else {}
    raise AssertionError(group)


def _compare_group(
    alt: _Alternative, group: str, outcome: Mapping[str, Any], caps: frozenset[str]
) -> list[Divergence]:
    if group in CHOICE_GROUPS:
        want = alt.expected["choices"][0]
        key = "tool_calls" if group == "custom_tool_calls" else group
        got = _choice0(outcome)
        # No first choice at all: each field it lacks is absent (a text field's "" is met).
        return compare({key: want[key]}, {} if got is MISSING else got, "choices[0]")
    if group == "choices":
        return _compare_choices(alt.expected["choices"], outcome, caps)
    return compare(_group_expectation(alt, group), outcome)


def _compare_choices(
    wanted: list[Any], outcome: Mapping[str, Any], caps: frozenset[str]
) -> list[Divergence]:
    """How many choices, and every choice but the first, on the fields exposed."""
    got = outcome.get("choices", MISSING)
    if not isinstance(got, list):
        return [Divergence("choices", wanted, got)]
    if len(got) != len(wanted):
        return [Divergence("choices.length", len(wanted), len(got))]
    found: list[Divergence] = []
    for i, want in enumerate(wanted[1:], start=1):
        if not isinstance(want, dict):
            continue
        shown = {k: v for k, v in want.items() if k == "index" or choice_key_group(k, v) in caps}
        if set(shown) - {"index"}:
            found.extend(compare(shown, got[i], f"choices[{i}]"))
    return found


def judge_groups(
    plan: GroupPlan,
    outcome: Mapping[str, Any] | None,
    *,
    deltas_checked: bool = False,
    deltas_problem: str | None = None,
) -> tuple[dict[str, str], list[Divergence], int]:
    """Each compared group's verdict (``pass``/``fail``), the divergences, the alternative.

    ``outcome`` is ``None`` for a crash, a timeout or an invalid outcome: every
    group that would have been compared is wrong. All verdicts come from one
    alternative: of those whose compared groups all pass, the one that compares
    the most groups (then the first); when none passes, the one with the fewest
    failing groups (then the fewest divergences). ``deltas_checked``
    says the incremental check ran (or, for ``None``, would have), and
    ``deltas_problem`` what it found.
    """
    caps = plan.capabilities
    best: tuple[int, int, int] | None = None
    chosen: tuple[dict[str, str], list[Divergence], int] = ({}, [], 0)
    passing: tuple[dict[str, str], list[Divergence], int] | None = None
    for number, alt in enumerate(plan.alternatives):
        groups, divergences = _judge_alternative(
            plan, alt, outcome, caps, deltas_checked or outcome is None, deltas_problem
        )
        if not groups:
            continue  # nothing of this alternative is compared: it cannot decide the run
        failing = sum(1 for v in groups.values() if v == "fail")
        if failing == 0:
            # Of the alternatives that pass, the one that judges the most groups.
            if passing is None or len(groups) > len(passing[0]):
                passing = (groups, [], number)
            continue
        score = (failing, len(divergences), number)
        if best is None or score < best:
            best, chosen = score, (groups, divergences, number)
    return passing or chosen


def _judge_alternative(
    plan: GroupPlan,
    alt: _Alternative,
    outcome: Mapping[str, Any] | None,
    caps: frozenset[str],
    deltas_checked: bool,
    deltas_problem: str | None,
) -> tuple[dict[str, str], list[Divergence]]:
    compared = set(alt.exposed)
    if alt.status_open:
        reported = outcome.get("status") if outcome is not None else None
        signal = _signal(reported, plan.case.status)
        if outcome is None or signal is None or signal in caps:
            compared.add("status")  # a false alarm on a signal the adapter claims is wrong
    if plan.checks_deltas and deltas_checked:
        compared.add("deltas")
    groups: dict[str, str] = {}
    divergences: list[Divergence] = []
    if outcome is None:
        return dict.fromkeys(sorted(compared, key=GROUPS.index), "fail"), []
    expected = alt
    if "status" in compared and finish_error_tolerated(alt.expected, outcome):
        # semantics §12.5.4: the finish reason was the only error signal
        expected = _Alternative(
            alt.stated, alt.exposed, alt.status_open, given={**alt.expected, "status": "complete"}
        )
    for group in sorted(compared, key=GROUPS.index):
        found: list[Divergence] = []
        if group != "deltas" or "deltas" in alt.expected:
            found = _compare_group(expected, group, outcome, caps)
        if group == "deltas" and deltas_problem and not found:
            found = [Divergence("deltas", "each piece surfaced in time", deltas_problem)]
        groups[group] = "fail" if found else "pass"
        divergences.extend(found)
    return groups, divergences


def profile_pairs(
    case: Case, profile: frozenset[str], *, in_process: bool = True
) -> frozenset[str]:
    """The groups a profile judges of ``case`` from the case files alone: those that
    every alternative of the case compares, so any acceptable reading can get them all.

    The status of a ``complete`` expectation counts as judged (its reported
    status is not known without a run), as does the incremental check when
    the profile claims ``incremental`` and the body is a stream.
    """
    plan = plan_groups(case, profile, in_process=in_process)
    if plan.gap or not plan.alternatives:
        return frozenset()
    common: frozenset[str] | None = None
    for alt in plan.alternatives:
        groups = alt.exposed | ({"status"} if alt.status_open else frozenset())
        common = groups if common is None else common & groups
    assert common is not None
    return common | ({"deltas"} if plan.checks_deltas else frozenset())
