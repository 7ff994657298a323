"""The mutants of the reference parser: where they are made and what each changes.

Every mutant changes one thing in one function of ``streamproof/reference/``
(``sse``, ``chat``, ``choices``, ``reader``); ``mutation_lib`` runs them against
the corpus and writes the report.
"""

from __future__ import annotations

import ast
import copy
import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCE_DIR = ROOT / "conformance" / "streamproof" / "reference"
#: The modules mutated: the SSE decoder, the chat accumulator (with its choice
#: model) and the body-kind decision. ``fastjson`` calls json's scanner; its
#: equivalence with ``json.loads`` is tested in tests/test_fastjson.py.
TARGETS = ("sse", "choices", "chat", "reader")

#: The semantics sections (docs/semantics.md) each function's rules come from.
SECTIONS: dict[str, tuple[str, ...]] = {
    "sse:SSEDecoder.__init__": ("3.1", "3.2", "3.5"),
    "sse:SSEDecoder.has_unterminated_event": ("3.6",),
    "sse:SSEDecoder.feed": ("3.2",),
    "sse:SSEDecoder.events": ("3.1", "3.2", "3.5"),
    "sse:SSEDecoder._whole_events": ("3.4", "3.5"),
    "sse:SSEDecoder._lines": ("3.1",),
    "sse:SSEDecoder.close": ("3.6",),
    "sse:SSEDecoder._strip_bom": ("3.2",),
    "sse:SSEDecoder._line_too_long": ("3.4",),
    "sse:SSEDecoder._line": ("3.3", "3.4", "3.5"),
    "sse:SSEDecoder._append_data": ("3.4",),
    "sse:SSEDecoder._dispatch": ("3.5",),
    "sse:_text": ("3.2",),
    "chat:StreamAccumulator.__init__": ("4.2", "10"),
    "chat:StreamAccumulator.finished": ("4.1", "8.4"),
    "chat:StreamAccumulator.fail": ("4.3", "5.1"),
    "chat:StreamAccumulator.feed": ("4.1",),
    "chat:StreamAccumulator.take_events": (
        "4.1",
        "4.2",
        "4.3",
        "4.5",
        "5.1",
        "6.1",
        "6.3",
        "6.4",
        "7.1",
        "8.1",
        "8.3",
        "8.4",
        "10",
    ),
    "chat:StreamAccumulator.take": ("9",),
    "chat:StreamAccumulator._error_event": ("8.2",),
    "chat:StreamAccumulator.outcome": ("5.1", "5.2", "5.3"),
    "chat:_other_fields": ("6.2", "6.5", "6.6", "6.7"),
    "chat:_text_freeing": ("4.2",),
    "chat:_text_of": ("4.3", "8.2"),
    "chat:error_from_body": ("8.5", "8.6"),
    "chat:read_completion": ("9",),
    "chat:_message_choice": ("9",),
    "chat:_failed": ("9",),
    "choices:ToolCall.as_dict": ("6.7",),
    "choices:Choice.as_dict": ("6.1",),
    "choices:first_text": ("6.7", "10"),
    "choices:error_fields": ("8.1",),
    "choices:content_parts": ("6.3",),
    "choices:thinking_texts": ("6.6",),
    "choices:tool_call_delta": ("6.7",),
    "choices:_new_call": ("6.7",),
    "choices:_names_a_tool": ("6.7",),
    "choices:NamedText.take": ("6.8", "6.9"),
    "choices:Audio.as_dict": ("6.11",),
    "choices:other_parts": ("6.8", "6.11", "6.12"),
    "choices:logprobs_piece": ("6.10",),
    "choices:_audio_piece": ("6.11",),
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
        "_line_too_long",
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
        "sse:SSEDecoder.close",
        "chat:StreamAccumulator.feed",
        "chat:StreamAccumulator.finished",
        "reader:read_response",
    }
)


#: Functions that exist only for the bounds (see BOUND_NAMES).
BOUND_FUNCTIONS = frozenset({"sse:SSEDecoder._line_too_long", "chat:_text_freeing"})


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
