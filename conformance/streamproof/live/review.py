"""``streamproof review``: a person checks a recorded case field by field.

A recorded case's expectation is the reference parser's reading of the
bytes; it counts only once a person has looked at the stream and accepted,
left out or corrected every field it states. This walks them through the
body (reads as recorded marked ``¦``), then each field, asking on stdin, and
on acceptance writes ``reviewed_by`` (and ``reviewed_at``) into provenance.
There is deliberately no way to accept without answering.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

from ..corpus.cases import Case, default_root
from ..corpus.gate import UnsafeFile, read_chunks, read_file, read_json
from ..corpus.schemas import schema_errors
from ..corpus.validate import needed_capabilities
from ..reporting.wire import terminal_lines, terminal_safe, wire_view
from ..resources import data_path

__all__ = ["review_main"]

FieldPath = tuple[str | int, ...]
_AWAITS = re.compile(r"The expectation is the reference parser's reading.*?never run\.", re.S)
_TITLE_SUFFIX = ", awaiting review"


class ReviewError(Exception):
    """The review cannot go on; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def review_main(args: argparse.Namespace) -> int:
    """``streamproof review`` with parsed options, at the terminal."""
    console = _Console(sys.stdin, sys.stdout)
    try:
        return _review(args, console)
    except ReviewError as exc:
        print(f"streamproof: {terminal_safe(str(exc))}", file=sys.stderr)
        return exc.code


class _Stop(Exception):
    """The person quit, or stdin ended."""


class _Console:
    """The terminal of the review. What it shows comes from a stranger's
    recording: every line is escaped, so none of it acts on the terminal."""

    def __init__(self, inp: TextIO, out: TextIO) -> None:
        self.inp, self.out = inp, out

    def say(self, text: str = "") -> None:
        """One line, whatever ``text`` holds."""
        print(terminal_safe(text), file=self.out)

    def show(self, block: str) -> None:
        """Several lines (indented JSON, a body made visible), each escaped."""
        print(terminal_lines(block), file=self.out)

    def ask(self, prompt: str) -> str:
        self.out.write(terminal_safe(prompt))
        self.out.flush()
        line = self.inp.readline()
        if not line:
            self.say()
            raise _Stop("stdin ended before the review did")
        return line.strip()


def _review(args: argparse.Namespace, console: _Console) -> int:
    folder = _find(args.case, args.corpus)
    data, body, ends = _load(folder)
    provenance = data["provenance"]
    if provenance["kind"] != "recorded":
        raise ReviewError(f"{data['id']} is {provenance['kind']}, not recorded; nothing to review")
    reviewer = args.reviewer or _default_reviewer()
    if not reviewer:
        raise ReviewError("who reviews? give --reviewer NAME (no git user.name, no $USER)")
    _show(console, data, body, ends)
    key = "expected" if "expected" in data else "expected_any"
    try:
        want = _walk(console, key, data[key])
        console.say(f"--- {key} after review ---")
        console.show(json.dumps(want, indent=2, ensure_ascii=False))
        reviewed = _reviewed(data, key, want, body, folder, reviewer)
        console.say(f"requires: {', '.join(reviewed['requires']) or '(nothing)'}")
        if _choose(console, f"accept it as reviewed by {reviewer}? [y/n] ", "yn") != "y":
            raise _Stop("not accepted")
        reviewed["title"] = _title(console, data["title"])
    except _Stop as stop:
        print(
            f"streamproof: review of {data['id']} stopped ({stop}); nothing written",
            file=sys.stderr,
        )
        return 1
    problem = schema_errors("case", reviewed)
    if problem:
        raise ReviewError(
            f"{folder / 'case.json'}: the reviewed case breaks the schema: {problem}", 1
        )
    text = json.dumps(reviewed, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    (folder / "case.json").write_bytes(text.encode("utf-8"))
    console.say(f"reviewed {data['id']} by {reviewer}: it runs from now on")
    console.say("record the change with 'streamproof manifest' and 'streamproof validate'")
    return 0


def _find(spec: str, corpus: Path | None) -> Path:
    given = Path(spec)
    if (given / "case.json").is_file():
        return given
    root = (corpus or default_root()).resolve()
    if (root / "cases" / spec / "case.json").is_file():
        return root / "cases" / spec
    raise ReviewError(f"no case {spec!r} in {root} (give a case id or a case folder)")


def _load(folder: Path) -> tuple[dict[str, Any], bytes, list[int] | None]:
    name = folder / "case.json"
    try:  # through the corpus gate, as every reader of a corpus
        data = read_json(name)
    except (OSError, ValueError) as exc:
        raise ReviewError(f"{name}: not valid JSON: {exc}") from None
    problem = schema_errors("case", data)
    if problem:
        raise ReviewError(f"{name}: {problem}")
    try:
        body = read_file(folder / data["response"]["body"])
    except UnsafeFile as exc:
        raise ReviewError(str(exc)) from None
    except OSError:
        raise ReviewError(f"{name}: body file {data['response']['body']!r} is missing") from None
    ends = None
    if (folder / "chunks.json").exists():
        try:
            sizes = read_chunks(folder / "chunks.json")["sizes"]
            ends = [sum(sizes[: i + 1]) for i in range(len(sizes))]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ReviewError(f"{folder / 'chunks.json'}: unreadable: {exc}") from None
        if not ends or ends[-1] != len(body):
            raise ReviewError(f"{folder / 'chunks.json'}: its sizes do not cover the body")
    return data, body, ends


def _show(console: _Console, data: dict[str, Any], body: bytes, ends: list[int] | None) -> None:
    response, provenance = data["response"], data["provenance"]
    console.say(f"{data['id']}: {data['title']}")
    console.say(
        f"recorded {provenance['recorded_at']} from {provenance['endpoint']}; "
        f"request: {json.dumps(data['request'], ensure_ascii=False)}"
    )
    if provenance.get("reviewed_by"):
        console.say(f"already reviewed by {provenance['reviewed_by']}; this review replaces it")
    console.say(f"HTTP {response['status']}")
    for name, value in response["headers"].items():
        console.say(f"  {name}: {value}")
    reads = f", {len(ends)} reads as recorded, marked ¦" if ends else ""
    console.say(f"--- {response['body']} ({len(body)} bytes{reads}) ---")
    console.show(wire_view(body, ends, limit=max(20_000, len(body))))
    console.say("--- each field of the expectation: is it what these bytes mean? ---")
    console.say("y: correct   n: leave it out   e: edit   q: quit without saving")


def _walk(console: _Console, key: str, want: Any) -> Any:
    result = copy.deepcopy(want)
    dropped: list[FieldPath] = []
    for path, value in _leaves(want, ()):
        shown = key + _dotted(path)
        prompt = f"{shown} = {json.dumps(value, ensure_ascii=False)}  [y/n/e/q] "
        answer = _choose(console, prompt, "yneq")
        if answer == "n" and (path[-1] == "status" or isinstance(path[-1], int)):
            console.say("  this one cannot be left out (status, or a list element); edit it")
            answer = _choose(console, prompt, "yeq")
        if answer == "q":
            raise _Stop("quit")
        if answer == "n":
            dropped.append(path)
        elif answer == "e":
            _put(result, path, _new_value(console, value))
    for path in reversed(dropped):
        _drop(result, path)
    return result


def _choose(console: _Console, prompt: str, allowed: str) -> str:
    while True:
        answer = console.ask(prompt).lower()[:1]
        if answer and answer in allowed:
            return answer
        console.say(f"  answer one of {', '.join(allowed)}")


def _new_value(console: _Console, old: Any) -> Any:
    while True:
        text = console.ask("  new value (JSON; plain text for a string field): ")
        try:
            return json.loads(text)
        except ValueError:
            if isinstance(old, str):
                return text
            console.say('  not JSON; write e.g. 12, null, "stop" or {"total_tokens": 9}')


def _title(console: _Console, current: str) -> str:
    default = current.removesuffix(_TITLE_SUFFIX)
    while True:
        title = console.ask(f"title, the behaviour in under 70 characters [{default}]: ")
        title = title or default
        if 8 <= len(title) <= 69 and title[:1].islower() and not title.endswith("."):
            return title
        console.say("  8 to 69 characters, starting lower-case, no final period")


def _reviewed(
    data: dict[str, Any], key: str, want: Any, body: bytes, folder: Path, reviewer: str
) -> dict[str, Any]:
    now = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    reviewed: dict[str, Any] = copy.deepcopy(data)
    reviewed[key] = want
    reviewed["provenance"]["reviewed_by"] = reviewer
    if _schema_has_reviewed_at():
        reviewed["provenance"]["reviewed_at"] = now
    note = f"The expectation was reviewed field by field by {reviewer} on {now[:10]}."
    comment, found = _AWAITS.subn(note, reviewed.get("comment", ""))
    reviewed["comment"] = comment if found else f"{comment} {note}".strip()
    case = Case(str(data["id"]), folder, reviewed, body)
    reviewed["requires"] = sorted(needed_capabilities(case))
    return reviewed


def _schema_has_reviewed_at() -> bool:
    """Until schemas/case.schema.json lists ``reviewed_at``, writing it would break the case."""
    schema = json.loads(data_path("schemas/case.schema.json").read_text(encoding="utf-8"))
    return "reviewed_at" in schema.get("$defs", {}).get("provenance", {}).get("properties", {})


def _leaves(value: Any, path: FieldPath) -> list[tuple[FieldPath, Any]]:
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(value, list) and value:
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*path, i))]
    return [(path, value)]


def _dotted(path: FieldPath) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _put(root: Any, path: FieldPath, value: Any) -> None:
    for step in path[:-1]:
        root = root[step]
    root[path[-1]] = value


def _drop(root: Any, path: FieldPath) -> None:
    """Leave out one key; an object emptied by it goes too, unless it is a list element."""
    parent = root
    for step in path[:-1]:
        parent = parent[step]
    parent.pop(path[-1], None)
    if not parent and len(path) > 1 and isinstance(path[-2], str):
        _drop(root, path[:-1])


def _default_reviewer() -> str:
    try:
        name = subprocess.run(
            ["git", "config", "user.name"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    return name or os.environ.get("USER", "")
