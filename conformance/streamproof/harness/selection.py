"""Which case runs a run makes: ids as printed, globs, providers and ``-k`` expressions.

A run prints each case run as ``case [transport]``; pytest prints
``streamproof::case[transport]``. Both forms select that one run, so an id
can be pasted back into ``--case`` or ``show``. A bare glob selects every
transport of the cases it matches. ``-k`` takes pytest's kind of
expression (``and``, ``or``, ``not``, parentheses) whose words match, case
insensitively, as substrings of a run's case id, title, tags, provider,
severity and transport. An expression is at most :data:`KEYWORD_WORDS`
words and operators long and nests (``not``, parentheses) at most
:data:`KEYWORD_DEPTH` levels deep: past either it is a ``KeywordError``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..corpus.cases import Case

__all__ = [
    "KEYWORD_DEPTH",
    "KEYWORD_WORDS",
    "KeywordError",
    "Selection",
    "awaiting_notice",
    "awaiting_review",
    "keyword_matcher",
    "split_run_id",
    "split_values",
]

#: The most words and operators in one ``-k`` expression.
KEYWORD_WORDS = 512
#: The deepest nesting of ``not`` and parentheses in one ``-k`` expression
#: (the parser and the matcher recurse once per level).
KEYWORD_DEPTH = 32

_RUN_ID = re.compile(r"^(?:streamproof::)?(?P<case>[^\[\]\s]+)\s*\[(?P<transport>[a-z]+)\]$")


class KeywordError(ValueError):
    """A ``-k`` expression that does not parse."""


def split_run_id(text: str) -> tuple[str, str | None]:
    """``'a/b [bytes]'``, ``'a/b[bytes]'``, ``'streamproof::a/b[bytes]'`` → ``('a/b', 'bytes')``."""
    match = _RUN_ID.match(text.strip())
    if match is None:
        return text.strip(), None
    return match["case"], match["transport"]


def split_values(values: Iterable[str]) -> list[str]:
    """Repeated options and comma lists as one list: ``['a,b', 'c']`` → ``['a', 'b', 'c']``."""
    found: list[str] = []
    for value in values:
        found += [part.strip() for part in value.split(",") if part.strip()]
    return found


@dataclass(frozen=True)
class Selection:
    """Case globs (each with an optional transport), providers and a keyword matcher."""

    cases: tuple[tuple[str, str | None], ...] = ()
    providers: frozenset[str] = frozenset()
    keyword: str = ""

    @classmethod
    def parse(
        cls, cases: Sequence[str] = (), providers: Sequence[str] = (), keyword: str = ""
    ) -> Selection:
        if keyword:
            keyword_matcher(keyword)  # a bad expression fails before any case runs
        return cls(
            tuple(split_run_id(c) for c in split_values(cases)),
            frozenset(split_values(providers)),
            keyword,
        )

    def wants_case(self, case: Case) -> bool:
        if self.providers and case.provider not in self.providers:
            return False
        return not self.cases or any(fnmatch.fnmatchcase(case.id, g) for g, _ in self.cases)

    def wants(self, case: Case, transport: str) -> bool:
        if not self.wants_case(case):
            return False
        if self.cases and not any(
            fnmatch.fnmatchcase(case.id, g) and t in (None, transport) for g, t in self.cases
        ):
            return False
        return not self.keyword or keyword_matcher(self.keyword)(_words(case, transport))

    def describe(self) -> str:
        """The selection in words, for a message that it selects nothing."""
        parts = [f"--case {glob}" + (f" [{t}]" if t else "") for glob, t in self.cases]
        parts += [f"--provider {p}" for p in sorted(self.providers)]
        parts += [f"-k {self.keyword!r}"] if self.keyword else []
        return " ".join(parts) or "the corpus"

    def plan(self, cases: Iterable[Case], transports: Sequence[str]) -> list[tuple[Case, str]]:
        """Every selected run of the runnable ``cases``, in corpus and transport order."""
        return [
            (case, t)
            for case in cases
            if case.runnable and self.wants_case(case)
            for t in transports
            if (t != "recorded" or case.has_chunks) and self.wants(case, t)
        ]


def _words(case: Case, transport: str) -> str:
    data = case.data
    fields = [case.id, case.title, case.provider, case.severity, transport, *data.get("tags", [])]
    return "\n".join(fields).lower()


_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


def keyword_matcher(expression: str) -> _Matcher:
    """Compile a ``-k`` expression; ``KeywordError`` says where it went wrong."""
    tokens = [t for t in _TOKEN.findall(expression) if t]
    if not tokens:
        raise KeywordError("-k: an empty expression")
    if len(tokens) > KEYWORD_WORDS:
        raise KeywordError(
            f"-k {_shown(expression)}: longer than {KEYWORD_WORDS} words and operators"
        )
    parser = _Parser(tokens, expression)
    matcher = parser.expression()
    if parser.position != len(tokens):
        raise KeywordError(f"-k {parser.text}: unexpected {tokens[parser.position]!r}")
    return matcher


class _Matcher:
    def __call__(self, words: str) -> bool:
        raise NotImplementedError


@dataclass(frozen=True)
class _Word(_Matcher):
    word: str

    def __call__(self, words: str) -> bool:
        return self.word in words


@dataclass(frozen=True)
class _Not(_Matcher):
    inner: _Matcher

    def __call__(self, words: str) -> bool:
        return not self.inner(words)


@dataclass(frozen=True)
class _Both(_Matcher):
    left: _Matcher
    right: _Matcher
    any: bool  # or, else and

    def __call__(self, words: str) -> bool:
        if self.any:
            return self.left(words) or self.right(words)
        return self.left(words) and self.right(words)


class _Parser:
    """expression := term ('or' term)*; term := factor ('and' factor)*;
    factor := 'not' factor | '(' expression ')' | WORD"""

    def __init__(self, tokens: list[str], text: str) -> None:
        self.tokens = tokens
        self.text = _shown(text)
        self.position = 0
        self.depth = 0  # of not and parentheses, at the token being read

    def _peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self) -> str:
        token = self._peek()
        if token is None:
            raise KeywordError(f"-k {self.text}: ends too early")
        self.position += 1
        return token

    def _nest(self) -> None:
        self.depth += 1
        if self.depth > KEYWORD_DEPTH:
            raise KeywordError(f"-k {self.text}: nests deeper than {KEYWORD_DEPTH} levels")

    def expression(self) -> _Matcher:
        left = self.term()
        while self._peek() == "or":
            self._take()
            left = _Both(left, self.term(), any=True)
        return left

    def term(self) -> _Matcher:
        left = self.factor()
        while self._peek() == "and":
            self._take()
            left = _Both(left, self.factor(), any=False)
        return left

    def factor(self) -> _Matcher:
        token = self._take()
        if token in ("not", "("):
            self._nest()
            inner = _Not(self.factor()) if token == "not" else self.expression()
            if token == "(" and self._take() != ")":
                raise KeywordError(f"-k {self.text}: a '(' is not closed")
            self.depth -= 1
            return inner
        if token in ("and", "or", ")"):
            raise KeywordError(f"-k {self.text}: unexpected {token!r}")
        return _Word(token.lower())


def _shown(expression: str) -> str:
    """An expression in a message: quoted, and cut when long."""
    return repr(expression if len(expression) <= 60 else expression[:57] + "...")


def awaiting_review(cases: Iterable[Case], globs: Sequence[str] = ()) -> list[Case]:
    """Recorded cases not yet reviewed (whose id matches a glob, when there are any)."""
    return [
        c
        for c in cases
        if not c.runnable and (not globs or any(fnmatch.fnmatchcase(c.id, g) for g in globs))
    ]


def awaiting_notice(count: int) -> str:
    """What a run says about the recorded cases it left out."""
    if count == 1:
        return "1 recorded case awaits review and was left out"
    return f"{count} recorded cases await review and were left out"
