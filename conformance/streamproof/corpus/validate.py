"""``streamproof validate``: everything that can be wrong with a corpus.

Beyond the schema check done at load time: ids and folders, title style,
capabilities against expectations, spec references, secrets, and the
manifest's digests. Each problem is one line naming the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..errors import CorpusError
from ..resources import data_path
from .cases import Case, file_digests, read_manifest, scan, tree_digest
from .evidence import evidence_problems
from .gate import UnsafeFile, read_file, read_text, walk
from .quirks import load_quirks, readme_with_tables

__all__ = [
    "CHOICE_FIELD_CAPABILITY",
    "check_corpus",
    "choice_field_capability",
    "needed_capabilities",
    "write_manifest",
]

_SECRETS = (
    re.compile(rb"sk-[A-Za-z0-9_-]{20,}"),
    re.compile(rb"(?i)bearer\s+[A-Za-z0-9._~+/-]{20,}"),
    re.compile(rb"AIza[0-9A-Za-z_-]{35}"),
    re.compile(rb"(?i)(api[_-]?key|access[_-]?token)\"?\s*[:=]\s*\"?[A-Za-z0-9_-]{16,}"),
)
_SECRET_HEADERS = frozenset({"authorization", "cookie", "set-cookie", "x-api-key", "api-key"})
#: Outcome keys of a choice, and the capability that claims each.
CHOICE_FIELD_CAPABILITY = {
    "role": "role",
    "content": "content",
    "reasoning": "reasoning",
    "refusal": "refusal",
    "finish_reason": "finish_reason",
    "tool_calls": "tool_calls",
    "function_call": "function_call",
    "logprobs": "logprobs",
    "audio": "audio",
    "annotations": "annotations",
}


def choice_field_capability(key: str, value: Any) -> str | None:
    """The capability that claims ``key`` of an expected choice: a ``tool_calls``
    list holding a custom call (``custom``, semantics §6.9) needs
    ``custom_tool_calls``, since only a parser that reports those can meet it."""
    if key == "tool_calls" and isinstance(value, list):
        if any(isinstance(call, dict) and "custom" in call for call in value):
            return "custom_tool_calls"
    return CHOICE_FIELD_CAPABILITY.get(key)


def needed_capabilities(case: Case) -> set[str]:
    """The capabilities that the case's expectations state (docs/terms.md: capability)."""
    needed: set[str] = set()
    for want in case.alternatives:
        needed |= _needed_by(want, case)
    return needed


def _needed_by(want: dict[str, Any], case: Case) -> set[str]:
    needed = set()
    if case.status >= 400:
        needed.add("http_error")
    elif want.get("status") == "error":
        needed.add("stream_error")
    if want.get("status") == "truncated":
        needed.add("truncation")
    if case.data["response"]["body"] == "response.json" and case.status < 400:
        needed.add("non_streaming")
    if "usage" in want:
        needed.add("usage")
    if "id" in want or "model" in want:
        needed.add("metadata")
    if "deltas" in want:
        needed.add("incremental")
    choices = want.get("choices", [])
    if len(choices) > 1:
        needed.add("multiple_choices")
    for choice in choices:
        needed |= {choice_field_capability(key, value) or "" for key, value in choice.items()}
    return needed - {""}


def _semantics_sections() -> set[str]:
    try:
        text = data_path("docs/semantics.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    return set(re.findall(r"^#{2,4} ([0-9]+(?:\.[0-9]+)*)\.? ", text, flags=re.M))


def _lint_case(case: Case, sections: set[str]) -> list[str]:
    name = (case.dir / "case.json").as_posix()
    problems = []
    title = case.title
    if title != title.strip() or title.endswith(".") or not title[:1].islower():
        problems.append(f"{name}: title {title!r} should start lower-case and not end with '.'")
    missing = needed_capabilities(case) - case.requires
    if missing:
        problems.append(
            f"{name}: the expectation needs capabilities {sorted(missing)} "
            "that 'requires' does not list"
        )
    for ref in case.data["spec"]:
        if ref.startswith("semantics §") and sections and ref[len("semantics §") :] not in sections:
            problems.append(f"{name}: spec {ref!r} names no section of docs/semantics.md")
    for header in case.headers:
        if header in _SECRET_HEADERS:
            problems.append(f"{name}: header {header!r} must not be kept in a case")
    for want in case.alternatives:
        if case.status >= 400 and want.get("status") != "error":
            problems.append(f"{name}: HTTP {case.status} must expect status 'error'")
    return problems + _fault_problems(case, name)


#: The folder of the cases whose fault exists only on a real connection
#: (corpus/README.md, 'Faults on a real connection').
WIRE_PROVIDER = "wire"


def _fault_problems(case: Case, name: str) -> list[str]:
    """A fault lives under ``wire/`` only, every case there has one, within the body."""
    fault = case.fault
    in_wire = case.id.startswith(f"{WIRE_PROVIDER}/")
    if fault is None:
        if in_wire:
            return [f"{name}: a case under '{WIRE_PROVIDER}/' needs a 'fault'"]
        return []
    if not in_wire:
        return [f"{name}: 'fault' belongs to cases under '{WIRE_PROVIDER}/' only"]
    after = fault["after_byte"]
    if after >= len(case.body):
        return [
            f"{name}: fault after_byte {after} is not within the body "
            f"({len(case.body)} bytes; it must be less)"
        ]
    return []


def _lint_manifest(root: Path, version: str, cases: list[Case]) -> list[str]:
    path = root / "manifest.json"
    try:
        manifest = read_manifest(root)
    except CorpusError as exc:
        return [f"{exc}; run 'streamproof manifest'"]
    problems = []
    if manifest.get("version") != version:
        problems.append(f"{path}: version {manifest.get('version')!r} is not VERSION {version!r}")
    listed: dict[str, str] = manifest.get("files", {})
    try:
        actual = file_digests(root)
    except CorpusError as exc:
        return [*problems, *exc.problems]
    for rel in sorted(set(listed) | set(actual)):
        if rel not in actual:
            problems.append(f"{path}: lists {rel!r}, which does not exist")
        elif rel not in listed:
            problems.append(f"{root / rel}: not in the manifest; run 'streamproof manifest'")
        elif listed[rel] != actual[rel]:
            problems.append(f"{root / rel}: sha256 differs from the manifest")
    if manifest.get("sha256") != tree_digest(listed):
        problems.append(f"{path}: 'sha256' is not the digest of the files it lists")
    retired = manifest.get("retired", {})
    for case in cases:
        if case.id in retired:
            problems.append(f"{case.dir}: id {case.id!r} was retired in {retired[case.id]}")
    return problems


def _lint_quirks(root: Path, cases: list[Case]) -> list[str]:
    """Tags name catalogued quirks, and the README's tables are current."""
    if not (root / "quirks.json").exists():
        return []  # a private corpus may do without a catalogue
    catalogue, problems = load_quirks(root)
    if catalogue is None:
        return problems
    for case in cases:
        for tag in case.data["tags"]:
            if tag not in catalogue.quirks:
                problems.append(
                    f"{case.dir / 'case.json'}: tag {tag!r} is not a quirk in quirks.json"
                )
    readme = root / "README.md"
    if readme.exists() and not problems:
        try:
            text = read_text(readme, root)
            current = readme_with_tables(text, catalogue, cases) == text
        except UnsafeFile as exc:
            return [str(exc)]
        except (OSError, ValueError) as exc:
            return [f"{readme}: {exc}"]
        if not current:
            problems.append(
                f"{readme}: the quirk tables are out of date; run 'streamproof quirks --write'"
            )
    return problems


def _secret_problems(root: Path) -> list[str]:
    """Every corpus file, read through the gate, that looks like it holds a secret.

    Not only bodies: a key streamed in pieces is whole in ``case.json``'s
    expectation, and any other file may carry one.
    """
    problems = []
    try:
        files = walk(root)
    except (OSError, UnsafeFile):
        return []  # scan() has said what is wrong with the folder
    for rel in files:
        path = root / rel
        try:
            data = read_file(path, root)
        except (OSError, UnsafeFile):
            continue  # scan() or the manifest check says why
        found = next((m.group() for p in _SECRETS if (m := p.search(data))), None)
        if found:
            problems.append(f"{path}: looks like it holds a secret: {found[:12]!r}…")
    return problems


def check_corpus(root: Path) -> list[str]:
    """Every problem with the corpus at ``root``, one line each."""
    version, cases, problems = scan(root)
    loaded = not problems
    sections = _semantics_sections()
    parents = {case.id: case.data.get("evidence", {}) for case in cases}
    for case in cases:
        problems.extend(_lint_case(case, sections))
        problems.extend(evidence_problems((case.dir / "case.json").as_posix(), case.data, parents))
    if version:  # the folder is a corpus
        problems.extend(_secret_problems(root))
    if cases:  # with no case loaded, every quirk table would look out of date
        problems.extend(_lint_quirks(root, cases))
    if cases and loaded:
        # The manifest is checked once every case loads: a broken case file
        # is one problem, not also a digest mismatch.
        problems.extend(_lint_manifest(root, version, cases))
    return problems


def write_manifest(root: Path) -> dict[str, Any]:
    """Rewrite ``manifest.json`` from the files; keep the retired list."""
    path = root / "manifest.json"
    retired: dict[str, str] = {}
    if path.exists() or path.is_symlink():
        retired = read_manifest(root).get("retired", {})
    try:
        version = read_text(root / "VERSION", root).strip()
    except UnsafeFile as exc:
        raise CorpusError([str(exc)]) from None
    files = file_digests(root)
    manifest = {
        "version": version,
        "sha256": tree_digest(files),
        "files": files,
        "retired": retired,
    }
    write_atomic(path, json.dumps(manifest, indent=2, sort_keys=False, allow_nan=False) + "\n")
    return manifest
