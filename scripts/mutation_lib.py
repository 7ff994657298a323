"""Mutation testing of the reference parser, with the corpus as the only test.

A small AST mutator: each mutant changes one thing in one function of
``streamproof/reference/`` (``sse``, ``chat``, ``choices``, ``reader``), the
reference modules are executed afresh in this process with the mutant in
place, and every corpus case is replayed through the mutated
``ResponseReader`` under ``whole``, a few fixed ``random`` seeds and
``bytes``. A mutant is killed by the first case run whose outcome the
harness would fail (``comparison.best_alternative``, and
``incremental.check_deltas`` on a streamed body, since the reference adapter
claims ``incremental``), or that raises, or that takes too long.

Why not mutmut or cosmic-ray: both rewrite the file on disk and run a test
command per mutant in a new process, so each mutant pays the interpreter
start, the package import and the corpus load (about 1.5 s here) before its
first case; here one worker loads the corpus once, swaps only the module
objects, and most mutants die on the first cases.

``scripts/mutation`` runs it all and writes ``reports/mutation.md``;
``tests/test_mutation.py`` runs a handful of mutants.
"""

from __future__ import annotations

import ast
import copy
import difflib
import json
import re
import resource
import signal
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "streamproof.reference"
SOURCE_DIR = ROOT / "conformance" / "streamproof" / "reference"
#: The modules mutated: the SSE decoder, the chat accumulator (with its choice
#: model) and the body-kind decision. ``fastjson`` only picks a JSON library;
#: its equivalence with the standard library is tested in tests/test_fastjson.py.
TARGETS = ("sse", "choices", "chat", "reader")
#: Every module of the reference parser, in the order they import each other.
LOAD_ORDER = ("fastjson", "sse", "choices", "chat", "reader")
TRANSPORTS = ("whole", "random:1", "random:2", "random:3", "bytes")
EQUIVALENTS = ROOT / "reports" / "mutation-equivalents.json"
#: Seconds one case run of a mutant may take before it counts as killed (a hang).
RUN_SECONDS = 5.0

#: The semantics sections (docs/semantics.md) each function's rules come from.
SECTIONS: dict[str, tuple[str, ...]] = {
    "sse:SSEDecoder.__init__": ("3.1", "3.2", "3.5"),
    "sse:SSEDecoder.has_unterminated_event": ("3.6",),
    "sse:SSEDecoder.feed": ("3.2",),
    "sse:SSEDecoder.events": ("3.1", "3.5"),
    "sse:SSEDecoder._irregular_events": ("3.1", "3.2"),
    "sse:SSEDecoder._read": ("3.1",),
    "sse:SSEDecoder._line_with_pending": ("3.1",),
    "sse:SSEDecoder._lf_lines": ("3.4", "3.5"),
    "sse:SSEDecoder._lf_lines_unbounded": ("3.4", "3.5"),
    "sse:SSEDecoder._any_lines": ("3.1",),
    "sse:SSEDecoder.close": ("3.6",),
    "sse:SSEDecoder._strip_bom": ("3.2",),
    "sse:SSEDecoder._check_line_bound": ("3.4",),
    "sse:SSEDecoder._line": ("3.3", "3.4", "3.5"),
    "sse:SSEDecoder._append_data": ("3.4",),
    "sse:SSEDecoder._dispatch": ("3.5",),
    "sse:_text": ("3.2",),
    "chat:StreamAccumulator.__init__": ("4.2", "10"),
    "chat:StreamAccumulator.finished": ("4.1", "8.4"),
    "chat:StreamAccumulator.fail": ("4.3", "5.1"),
    "chat:StreamAccumulator.feed": ("4.1",),
    "chat:StreamAccumulator.take_events": ("4.2", "6.1", "6.3", "6.4"),
    "chat:StreamAccumulator.take": ("4.1", "4.3", "4.5", "8.2", "8.4"),
    "chat:StreamAccumulator._chunk": ("6.1", "6.3", "7.1", "8.1", "10"),
    "chat:StreamAccumulator._choice": ("6.1",),
    "chat:StreamAccumulator._choice_delta": ("6.2", "6.3", "6.4", "6.5", "6.6", "6.7"),
    "chat:StreamAccumulator._finish": ("6.4", "8.3"),
    "chat:StreamAccumulator.outcome": ("5.1", "5.2", "5.3"),
    "chat:_text_freeing": ("4.2",),
    "chat:_text_of": ("4.3", "8.2"),
    "chat:_inexact_numbers": ("6.1", "6.7"),
    "chat:error_from_body": ("8.5", "8.6"),
    "chat:read_completion": ("9",),
    "chat:_message_choice": ("9",),
    "chat:_failed": ("9",),
    "choices:ToolCall.as_dict": ("6.7",),
    "choices:Choice.as_dict": ("6.1",),
    "choices:text_or_empty": ("6.5", "8.1"),
    "choices:first_text": ("6.7", "10"),
    "choices:error_fields": ("8.1",),
    "choices:content_parts": ("6.3",),
    "choices:thinking_texts": ("6.6",),
    "choices:tool_call_delta": ("6.7",),
    "choices:loads_or_text": ("8.2", "8.5"),
    "reader:body_kind": ("2.1", "2.2"),
    "reader:ResponseReader.__init__": ("2.1",),
    "reader:ResponseReader.feed": ("3.6", "11"),
    "reader:ResponseReader.close": ("3.6", "5.3"),
    "reader:read_response": ("11",),
}


@dataclass(frozen=True)
class Mutant:
    """One change at one place: ``id`` is stable while the function's code is."""

    module: str
    function: str
    operator: str
    original: str
    replacement: str
    ordinal: int  # how many identical changes come before it in the function, plus one
    position: int  # its place in the module's list of mutants
    line: int
    left_out: str = ""  # why the mutant is not made (a bound, off the reader's path)

    @property
    def id(self) -> str:
        return (
            f"{self.module}.py:{self.function}:{self.operator}:"
            f"{self.original}->{self.replacement}#{self.ordinal}"
        )

    @property
    def sections(self) -> tuple[str, ...]:
        return SECTIONS.get(f"{self.module}:{self.function}", ())


# -- operators ---------------------------------------------------------------

_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
}
_SYMBOL: dict[type[ast.AST], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.And: "and",
    ast.Or: "or",
}

# A change is (operator, original, replacement, apply); apply changes the tree in place.
Change = tuple[str, str, str, Callable[[], None]]


def _short(node: ast.AST) -> str:
    text = ast.unparse(node).replace("\n", " ")
    return text if len(text) <= 40 else text[:37] + "..."


def _constant_change(value: Any) -> tuple[Any, Any] | None:
    if isinstance(value, bool):
        return value, not value
    if isinstance(value, int):
        return value, {0: 1, 1: 0}.get(value, value + 1)
    if isinstance(value, str):
        return value, "x" if value == "" else ""
    if isinstance(value, bytes):
        return value, b"x" if value == b"" else b""
    if value is None:
        return None, ""
    return None


def _changes(node: ast.AST, parent: ast.AST) -> list[Change]:
    """Every mutation of ``node`` itself (not of its children)."""
    found: list[Change] = []
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            swap = _COMPARE.get(type(op))
            if swap is not None:

                def apply_compare(i: int = i, swap: type[ast.cmpop] = swap) -> None:
                    node.ops[i] = swap()

                found.append(("compare", _SYMBOL[type(op)], _SYMBOL[swap], apply_compare))
    elif isinstance(node, ast.BoolOp):
        new_bool: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()

        def apply_bool() -> None:
            node.op = new_bool

        found.append(("boolean", _SYMBOL[type(node.op)], _SYMBOL[type(new_bool)], apply_bool))
    elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _ARITHMETIC:
        new_bin = _ARITHMETIC[type(node.op)]

        def apply_bin() -> None:
            node.op = new_bin()

        found.append(("arithmetic", _SYMBOL[type(node.op)], _SYMBOL[new_bin], apply_bin))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        operand = node.operand
        found.append(("negation", "not", "(removed)", lambda: _replace(parent, node, operand)))
    elif isinstance(node, ast.Constant) and not isinstance(parent, ast.Expr | ast.JoinedStr):
        change = _constant_change(node.value)
        if change is not None and not (
            node.value is None and isinstance(parent, ast.Compare | ast.Return)
        ):
            old, new_value = change

            def apply_constant(new_value: Any = new_value) -> None:
                node.value = new_value

            found.append(("constant", repr(old), repr(new_value), apply_constant))
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        test = node.test

        def apply_not() -> None:
            node.test = ast.UnaryOp(op=ast.Not(), operand=test)

        found.append(("negate-condition", _short(test), f"not ({_short(test)})", apply_not))
    if (
        isinstance(node, ast.Return)
        and node.value is not None
        and not (isinstance(node.value, ast.Constant) and node.value.value is None)
    ):
        value = node.value

        def apply_return() -> None:
            node.value = ast.Constant(value=None)

        found.append(("return-value", _short(value), "None", apply_return))
    if (
        isinstance(node, ast.stmt)
        and not isinstance(
            node, ast.Pass | ast.FunctionDef | ast.ClassDef | ast.Global | ast.Nonlocal
        )
        and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ):
        found.append(("delete-statement", _short(node), "pass", lambda: _delete(parent, node)))
    return found


def _replace(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is old:
                    value[i] = new
                    return
    raise AssertionError("node not found in its parent")


def _delete(parent: ast.AST, node: ast.AST) -> None:
    _replace(parent, node, ast.Pass())


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef]]:
    for top in tree.body:
        if isinstance(top, ast.FunctionDef):
            yield top.name, top
        elif isinstance(top, ast.ClassDef):
            for item in top.body:
                if isinstance(item, ast.FunctionDef):
                    yield f"{top.name}.{item.name}", item


#: Names that only the resource bounds use (16 MiB lines and events, 64 MiB
#: bodies, 1 MiB events read apart): no rule of docs/semantics.md speaks of
#: them and no corpus case can reach them; tests/test_reference.py and
#: tests/hostile/ test them. A change whose own code mentions one is not made.
BOUND_NAMES = frozenset(
    {
        "_max_line",
        "_max_event",
        "_data_size",
        "_exact_size",
        "_check_line_bound",
        "MAX_BUFFERED_BODY",
        "_too_large",
        "LARGE_EVENT",
        "large",
        "limit",
        "tail_size",
        "_text_freeing",
        "SSEProtocolError",  # raised by the decoder only when a bound is broken
    }
)
#: Functions a ``ResponseReader`` never calls: the decoder's and the
#: accumulator's text API for library users, tested by tests/test_sse.py and
#: tests/test_chat.py. The corpus runs through the reader only.
OFF_PATH = frozenset(
    {
        "sse:SSEDecoder.feed",
        "sse:SSEDecoder.has_unterminated_event",
        "chat:StreamAccumulator.feed",
        "reader:read_response",
    }
)


#: Functions that exist only for the bounds (see BOUND_NAMES).
BOUND_FUNCTIONS = frozenset({"sse:SSEDecoder._check_line_bound", "chat:_text_freeing"})


def _sites(tree: ast.Module, module: str) -> Iterator[tuple[str, ast.AST, Change, str]]:
    """``(function, node, change, why not made)`` in a fixed order: function by function."""
    for name, function in _functions(tree):
        off = "off the reader's path" if f"{module}:{name}" in OFF_PATH else ""
        off = "a resource bound" if f"{module}:{name}" in BOUND_FUNCTIONS else off
        for statement in function.body:
            if (
                statement is function.body[0]
                and isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
            ):
                continue  # the docstring
            yield from _walk(name, statement, function, off)
            if not off and _bound_gate(statement):
                off = "a resource bound"  # what follows runs only near a bound


def _bound_gate(statement: ast.stmt) -> bool:
    """``if <within the bound>: ...; return``: the rest of the function is the bounded path."""
    return (
        isinstance(statement, ast.If)
        and bool(_own_names(statement) & BOUND_NAMES)
        and any(
            isinstance(op, ast.Lt | ast.LtE)
            for node in ast.walk(statement.test)
            if isinstance(node, ast.Compare)
            for op in node.ops
        )
        and isinstance(statement.body[-1], ast.Return)
        and not statement.orelse
    )


def _own_names(node: ast.AST) -> set[str]:
    """The names and attributes in ``node``'s own code (a block's test, not its body)."""
    if isinstance(node, ast.If | ast.While):
        parts: list[ast.AST] = [node.test]
    elif isinstance(node, ast.For):
        parts = [node.target, node.iter]
    elif isinstance(node, ast.With | ast.Try | ast.FunctionDef | ast.ClassDef):
        parts = []
    else:
        parts = [node]
    names = set()
    for part in parts:
        for sub in ast.walk(part):
            if isinstance(sub, ast.Name):
                names.add(sub.id)
            elif isinstance(sub, ast.Attribute):
                names.add(sub.attr)
    return names


def _walk(
    name: str, node: ast.AST, parent: ast.AST, why: str
) -> Iterator[tuple[str, ast.AST, Change, str]]:
    names = _own_names(node)
    inherited = why
    if not why and (names & BOUND_NAMES or (name == "SSEDecoder._lf_lines" and "size" in names)):
        why = "a resource bound"  # (``size`` is the event bound's count in _lf_lines only)
    for change in _changes(node, parent):
        yield name, node, change, why
    if isinstance(node, ast.stmt) and _bound_gate(node):
        why = inherited  # the gate's body is the ordinary path: only its test is the bound's
    for field_name, value in ast.iter_fields(node):
        if field_name in ("annotation", "returns", "type_comment"):
            continue
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, ast.AST) and not isinstance(
                child, ast.expr_context | ast.operator | ast.cmpop | ast.boolop | ast.unaryop
            ):
                yield from _walk(name, child, node, why)


def source_of(module: str) -> str:
    return (SOURCE_DIR / f"{module}.py").read_text(encoding="utf-8")


def mutants(modules: tuple[str, ...] = TARGETS, *, left_out: bool = False) -> list[Mutant]:
    """Every mutant of ``modules`` that is made, in a fixed order.

    With ``left_out``, the ones not made instead (``Mutant.left_out`` says why).
    """
    found: list[Mutant] = []
    for module in modules:
        tree = ast.parse(source_of(module))
        seen: dict[tuple[str, str, str, str], int] = {}
        for position, (function, node, change, why) in enumerate(_sites(tree, module)):
            operator, old, new, _ = change
            key = (function, operator, old, new)
            seen[key] = seen.get(key, 0) + 1
            line = getattr(node, "lineno", 0)
            mutant = Mutant(module, function, operator, old, new, seen[key], position, line, why)
            if bool(why) == left_out:
                found.append(mutant)
    return found


def mutated_source(mutant: Mutant) -> tuple[str, str]:
    """``(the mutated module's code, a diff of the function it changed)``."""
    tree = ast.parse(source_of(mutant.module))
    for position, (function, _, (_, _, _, apply), _) in enumerate(_sites(tree, mutant.module)):
        if position == mutant.position:
            before = _function_text(tree, function)
            apply()
            ast.fix_missing_locations(tree)
            after = _function_text(tree, function)
            diff = difflib.unified_diff(
                before.splitlines(), after.splitlines(), "original", "mutant", n=1, lineterm=""
            )
            return ast.unparse(tree), "\n".join(list(diff)[2:])
    raise LookupError(f"no mutant at position {mutant.position} of {mutant.module}")


def _function_text(tree: ast.Module, name: str) -> str:
    for found, function in _functions(tree):
        if found == name:
            return ast.unparse(copy.deepcopy(function))
    raise LookupError(name)


# -- loading a variant of the reference parser --------------------------------


def load_reference(replaced: dict[str, str] | None = None) -> dict[str, types.ModuleType]:
    """The reference modules executed afresh, ``replaced`` (module -> code) in place.

    They are registered in ``sys.modules`` while they run, so their relative
    imports find each other; the previous entries are put back after.
    """
    replaced = replaced or {}
    saved = {name: sys.modules.get(f"{PACKAGE}.{name}") for name in LOAD_ORDER}
    loaded: dict[str, types.ModuleType] = {}
    try:
        for name in LOAD_ORDER:
            path = SOURCE_DIR / f"{name}.py"
            module = types.ModuleType(f"{PACKAGE}.{name}")
            module.__file__ = str(path)
            module.__package__ = PACKAGE
            sys.modules[module.__name__] = module
            code = replaced.get(name)
            text = code if code is not None else source_of(name)
            exec(compile(text, str(path), "exec"), module.__dict__)
            loaded[name] = module
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(f"{PACKAGE}.{name}", None)
            else:
                sys.modules[f"{PACKAGE}.{name}"] = old
    return loaded


# -- the corpus as the test ---------------------------------------------------


@dataclass(frozen=True)
class Run:
    case: str
    transport: str
    status: int
    headers: dict[str, str]
    request: dict[str, Any]
    body: bytes
    reads: list[bytes]
    alternatives: list[Any]
    incremental: bool  # a streamed body: the deltas are checked


def corpus_runs(
    transports: tuple[str, ...] = TRANSPORTS, cases: list[str] | None = None
) -> list[Run]:
    """Every case under every transport, transport by transport (the quick ones first)."""
    from streamproof.corpus import load_corpus
    from streamproof.harness.incremental import covers
    from streamproof.harness.transports import boundaries, split

    corpus = load_corpus()
    chosen = [c for c in corpus.cases if cases is None or c.id in cases]
    runs: list[Run] = []
    for transport in transports:
        name, _, seed = transport.partition(":")
        for case in chosen:
            ends = boundaries(case.body, name, seed=int(seed or 0), case_dir=case.dir)
            runs.append(
                Run(
                    case.id,
                    transport,
                    case.status,
                    case.headers,
                    case.request,
                    case.body,
                    split(case.body, ends),
                    case.alternatives,
                    covers(case.status, case.headers, case.request),
                )
            )
    return runs


class _Hang(BaseException):
    """A case run took longer than RUN_SECONDS (a BaseException: no ``except`` takes it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Hang


def verdict(reader_class: Any, run: Run) -> str | None:
    """Why the harness would fail this run of the parser, or ``None`` when it passes."""
    from streamproof.corpus.schemas import schema_errors
    from streamproof.harness.comparison import best_alternative
    from streamproof.harness.incremental import check_deltas

    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, RUN_SECONDS)
    ends: list[int] = []
    try:
        reader = reader_class(run.status, run.headers, run.request)
        deltas = []
        at = 0
        for data in run.reads:
            at += len(data)
            ends.append(at)
            for piece in reader.feed(data):
                deltas.append({"choice": piece.choice, "content": piece.content, "at_byte": at})
        outcome = reader.close()
    except _Hang:
        return f"hangs for more than {RUN_SECONDS:g}s"
    except (Exception, RecursionError) as exc:  # a crash is a failure the harness reports
        return f"raises {type(exc).__name__}: {str(exc)[:80]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    try:
        if run.transport == "whole":  # the outcome's shape, checked once per case as judge does
            problem = schema_errors("outcome", outcome)
            if problem:
                return f"outcome does not match the outcome schema: {problem[:80]}"
        found = best_alternative(run.alternatives, outcome)
        if found:
            return str(found[0])[:120]
        if run.incremental:
            late = check_deltas(run.body, ends, deltas, outcome)
            if late:
                return f"incremental: {late[:100]}"
    except Exception as exc:  # an outcome the harness cannot even read
        return f"outcome not readable: {type(exc).__name__}"
    return None


@dataclass(frozen=True)
class Result:
    mutant: Mutant
    killed_by: str | None  # "case [transport]", or None when it survived
    reason: str


def check_mutant(mutant: Mutant, runs: list[Run]) -> Result:
    """Run the corpus against one mutant; stop at the first run that fails."""
    try:
        code, _ = mutated_source(mutant)
        modules = load_reference({mutant.module: code})
    except Exception as exc:  # the mutant does not even load: killed at import
        return Result(mutant, "(import)", f"{type(exc).__name__}: {exc}")
    reader_class = modules["reader"].ResponseReader
    for run in runs:
        why = verdict(reader_class, run)
        if why is not None:
            return Result(mutant, f"{run.case} [{run.transport}]", why)
    return Result(mutant, None, "")


_RUNS: list[Run] = []


def _init_worker(cases: list[str] | None) -> None:
    global _RUNS
    # A mutant that grows a buffer for ever fails with MemoryError, not the machine.
    limit = 3 * 1024**3
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    _RUNS = corpus_runs(cases=cases)


def _check_in_worker(mutant: Mutant) -> Result:
    return check_mutant(mutant, _RUNS)


def run_mutants(
    chosen: list[Mutant],
    jobs: int = 2,
    cases: list[str] | None = None,
    progress: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Check every mutant in ``chosen``, in ``jobs`` processes (at most 2)."""
    jobs = max(1, min(jobs, 2))
    results: list[Result] = []
    if jobs == 1:
        runs = corpus_runs(cases=cases)
        for mutant in chosen:
            results.append(check_mutant(mutant, runs))
            if progress:
                progress(results[-1])
        return results
    import multiprocessing

    context = multiprocessing.get_context("fork")
    with context.Pool(jobs, initializer=_init_worker, initargs=(cases,)) as pool:
        for result in pool.imap(_check_in_worker, chosen, chunksize=4):
            results.append(result)
            if progress:
                progress(result)
    return results


# -- the reviewed equivalents and the report ------------------------------------


def read_results(path: Path, chosen: list[Mutant], *, missing_ok: bool = False) -> list[Result]:
    """The results a full run saved (``reports/mutation.json``), for the mutants still made.

    A mutant the run did not make is an error, or with ``missing_ok`` a
    result not yet known (``killed_by`` None, reason ``"not run"``).
    """
    saved = {row["id"]: row for row in json.loads(path.read_text(encoding="utf-8"))}
    missing = [m.id for m in chosen if m.id not in saved]
    if missing and not missing_ok:
        raise ValueError(f"{len(missing)} mutants not in the saved run, e.g. {missing[0]}: rerun")
    return [
        Result(m, saved[m.id]["killed_by"], saved[m.id]["why"])
        if m.id in saved
        else Result(m, None, "not run")
        for m in chosen
    ]


def read_equivalents(path: Path = EQUIVALENTS) -> dict[str, str]:
    """Mutant id -> the reviewer's one-line argument that no outcome can differ."""
    if not path.exists():
        return {}
    document = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): str(v) for k, v in document["equivalent"].items()}


_LEFT_OUT = {
    "a resource bound": (
        "code that only enforces the 16 MiB line and event bounds, the 64 MiB body bound "
        "or the 1 MiB large-event path (`BOUND_NAMES`); no semantics rule speaks of them "
        "and no corpus case can reach them (tests/test_reference.py and tests/hostile/ do)"
    ),
    "off the reader's path": (
        "`SSEDecoder.feed`, `has_unterminated_event` and `StreamAccumulator.feed`, the text "
        "API for library users that `ResponseReader` never calls (tests/test_sse.py and "
        "tests/test_chat.py test it), and `read_response`, the wrapper that feeds a "
        "`ResponseReader` every read and closes it: this harness drives `ResponseReader` "
        "read by read itself, as the reference adapter does, to see the deltas"
    ),
}

_CASE = re.compile(r"^(.*) \[(.*)\]$")


def report(results: list[Result], equivalents: dict[str, str]) -> str:
    """``reports/mutation.md``."""
    total = len(results)
    survivors = [r for r in results if r.killed_by is None]
    equivalent = [r for r in survivors if r.mutant.id in equivalents]
    open_ = [r for r in survivors if r.mutant.id not in equivalents]
    stale = sorted(set(equivalents) - {r.mutant.id for r in survivors})
    share = 100 * len(equivalent) / total if total else 0.0
    modules = ", ".join(f"`{m}.py`" for m in TARGETS)
    lines = [
        "# Mutation testing of the reference parser",
        "",
        "Generated by `scripts/mutation --write`; do not edit. Each mutant changes one",
        f"thing in one function of `conformance/streamproof/reference/` ({modules}).",
        "The corpus is the only test: every case under "
        + ", ".join(f"`{t}`" for t in TRANSPORTS)
        + ",",
        "judged as the harness judges the reference adapter (comparison, and the",
        "incremental check on every streamed body). A mutant is killed by the first",
        "run that fails, raises or hangs. Equivalent mutants carry a reviewed",
        "argument in `reports/mutation-equivalents.json`.",
        "",
        "| mutants | killed | survived | equivalent | survived, not equivalent |",
        "| ---: | ---: | ---: | ---: | ---: |",
        f"| {total} | {total - len(survivors)} | {len(survivors)} "
        f"| {len(equivalent)} ({share:.1f}%) | {len(open_)} |",
        "",
        "## By operator",
        "",
        "| operator | mutants | killed | equivalent | not equivalent |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for operator in sorted({r.mutant.operator for r in results}):
        mine = [r for r in results if r.mutant.operator == operator]
        lines.append(
            f"| {operator} | {len(mine)} | {sum(r.killed_by is not None for r in mine)} "
            f"| {sum(r in equivalent for r in mine)} | {sum(r in open_ for r in mine)} |"
        )
    left_out = mutants(left_out=True)
    reasons: dict[str, int] = {}
    for mutant in left_out:
        reasons[mutant.left_out] = reasons.get(mutant.left_out, 0) + 1
    lines += [
        "",
        "## Not made",
        "",
        f"{len(left_out)} more changes are not made, so not counted above:",
        "",
        *(f"- {n} on {why}: {_LEFT_OUT[why]}" for why, n in sorted(reasons.items())),
    ]
    lines += [
        "",
        "## By semantics section",
        "",
        "The cases whose runs killed mutants of the code that implements each section of",
        "`docs/semantics.md` (functions are mapped to sections in `scripts/mutation_lib.py`,",
        "`SECTIONS`).",
        "",
        "| section | mutants | killed | killed by ≥ 2 cases | killing cases |",
        "| --- | ---: | ---: | --- | --- |",
    ]
    sections = sorted(
        {s for r in results for s in r.mutant.sections},
        key=lambda s: tuple(int(p) for p in s.split(".")),
    )
    for section in sections:
        mine = [r for r in results if section in r.mutant.sections]
        cases = killing_cases(mine)
        lines.append(
            f"| §{section} | {len(mine)} | {sum(r.killed_by is not None for r in mine)} "
            f"| {'yes' if len(cases) >= 2 else '**no**'} "
            f"| {len(cases)}: " + ", ".join(f"`{c}`" for c in cases) + " |"
        )
    lines += ["", "## Equivalent mutants", ""]
    if not equivalent:
        lines.append("None.")
    for r in equivalent:
        lines += _survivor(r, equivalents[r.mutant.id])
    lines += ["", "## Surviving mutants that are not equivalent", ""]
    if not open_:
        lines.append("None.")
    for r in open_:
        lines += _survivor(r, "No case kills it yet.")
    if stale:
        lines += ["", "## Listed as equivalent but killed or gone", ""]
        lines += [f"- `{s}`" for s in stale]
    lines += ["", "## Every mutant", "", "| mutant | line | killed by |", "| --- | ---: | --- |"]
    for r in results:
        killer = r.killed_by or ("equivalent" if r in equivalent else "**survived**")
        lines.append(f"| `{_cell(r.mutant.id)}` | {r.mutant.line} | {_cell(killer)} |")
    return "\n".join(lines) + "\n"


def killing_cases(results: list[Result]) -> list[str]:
    """The distinct cases that killed any of ``results``."""
    found = set()
    for r in results:
        match = _CASE.match(r.killed_by or "")
        if match:
            found.add(match.group(1))
    return sorted(found)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def _survivor(result: Result, argument: str) -> list[str]:
    _, diff = mutated_source(result.mutant)
    sections = ", ".join(f"§{s}" for s in result.mutant.sections) or "none"
    return [
        f"### `{result.mutant.id}`",
        "",
        f"`{result.mutant.module}.py` line {result.mutant.line}; sections {sections}. {argument}",
        "",
        "```diff",
        diff,
        "```",
        "",
    ]
