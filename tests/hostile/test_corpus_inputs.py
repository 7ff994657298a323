"""A corpus someone else wrote: links, special files, huge or deep files, bad shapes.

Each corpus is built in a temporary folder. Whatever is wrong is one line
naming the path, from the loader, ``validate`` and the digest alike; nothing
outside the corpus is read, nothing hangs.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamproof.corpus import CorpusError, file_digests, load_case, load_corpus, scan
from streamproof.corpus.cases import read_manifest
from streamproof.corpus.gate import MAX_DEPTH, SIZE_VARIABLE, UnsafeFile, read_file
from streamproof.corpus.validate import check_corpus, write_manifest

from .corpus_builder import CHUNKED, STREAM, build_corpus, one_line


def _within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s value, failing the test if it takes longer (a FIFO would block)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _refused(root: Path) -> list[str]:
    with pytest.raises(CorpusError) as caught:
        _within(10, lambda: load_corpus(root))
    return caught.value.problems


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_corpus(tmp_path)


def test_the_small_corpus_loads_and_validates(root: Path) -> None:
    assert len(load_corpus(root).cases) == 2
    assert check_corpus(root) == []


def test_a_body_linked_to_a_secret_file_is_refused_everywhere(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "environ"
    secret.write_bytes(b"CI_TOKEN=hunter2\n")
    body = root / "cases" / STREAM / "response.sse"
    body.unlink()
    body.symlink_to(secret)
    problems = _refused(root)
    assert problems == [f"{body}: a symbolic link; a corpus holds regular files and folders only"]
    assert all("hunter2" not in p for p in check_corpus(root))
    assert any(str(body) in p for p in check_corpus(root))
    with pytest.raises(CorpusError):
        file_digests(root)
    with pytest.raises(UnsafeFile, match="symbolic link"):
        read_file(body)  # the gate itself, without the walk before it


def test_a_linked_case_folder_is_refused_not_left_out_of_the_digest(
    root: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    (root / "cases" / CHUNKED).rename(elsewhere)
    (root / "cases" / CHUNKED).symlink_to(elsewhere, target_is_directory=True)
    problems = _refused(root)
    assert len(problems) == 1
    assert str(root / "cases" / CHUNKED) in problems[0]
    assert "symbolic link" in problems[0]
    with pytest.raises(CorpusError, match="symbolic link"):
        file_digests(root)  # once skipped by rglob while the loader followed it


def test_a_linked_provider_folder_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "cases" / "generic").rename(tmp_path / "generic")
    (root / "cases" / "generic").symlink_to(tmp_path / "generic", target_is_directory=True)
    assert "symbolic link" in _refused(root)[0]


def test_read_file_refuses_a_link_among_the_folders(root: Path, tmp_path: Path) -> None:
    (root / "cases" / "generic").rename(tmp_path / "generic")
    (root / "cases" / "generic").symlink_to(tmp_path / "generic", target_is_directory=True)
    body = root / "cases" / STREAM / "response.sse"
    with pytest.raises(UnsafeFile, match="symbolic link"):
        read_file(body, root)


def test_a_link_to_dev_zero_is_one_line_not_a_memory_error(root: Path) -> None:
    body = root / "cases" / STREAM / "response.sse"
    body.unlink()
    body.symlink_to("/dev/zero")
    problems = _refused(root)
    assert len(problems) == 1 and one_line(problems[0])


def test_a_fifo_is_refused_without_waiting_for_a_writer(root: Path) -> None:
    body = root / "cases" / STREAM / "response.sse"
    body.unlink()
    os.mkfifo(body)
    assert _refused(root) == [f"{body}: a FIFO; a corpus holds regular files and folders only"]
    with pytest.raises(UnsafeFile, match="FIFO"):
        _within(10, lambda: read_file(body))
    problems = _within(10, lambda: check_corpus(root))
    assert problems and all(one_line(p) for p in problems)


def test_a_file_over_the_bound_is_refused_and_the_bound_is_configurable(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = root / "cases" / STREAM / "response.sse"
    size = body.stat().st_size
    monkeypatch.setenv(SIZE_VARIABLE, str(size - 1))
    problems = _refused(root)
    assert problems == [
        f"{body}: {size} bytes, over the bound of {size - 1} bytes per corpus file "
        f"(${SIZE_VARIABLE})"
    ]
    monkeypatch.setenv(SIZE_VARIABLE, str(10 * size))
    assert len(load_corpus(root).cases) == 2
    monkeypatch.setenv(SIZE_VARIABLE, "lots")
    assert SIZE_VARIABLE in _refused(root)[0]


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        ("[]", "not a JSON object but list"),
        ("null", "not a JSON object but NoneType"),
        ('{"files": "abc"}', "'files' is 'abc', not an object"),
        ('{"retired": 5}', "'retired' is 5, not an object"),
        ('{"version": 1}', "'version' is 1, not a string"),
    ],
)
def test_a_manifest_of_the_wrong_shape_is_one_line(root: Path, manifest: str, said: str) -> None:
    (root / "manifest.json").write_text(manifest, encoding="utf-8")
    problems = check_corpus(root)
    assert len(problems) == 1 and said in problems[0] and one_line(problems[0])
    with pytest.raises(CorpusError, match=said.replace("(", r"\(")):
        write_manifest(root)
    with pytest.raises(CorpusError):
        read_manifest(root)


def test_a_version_file_that_is_not_utf8_is_one_line(root: Path) -> None:
    (root / "VERSION").write_bytes(b"1.0.\xff\n")
    problems = _refused(root)
    assert problems == [f"{root / 'VERSION'}: not UTF-8 (byte 4 is b'\\xff')"]


def test_a_readme_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    root = build_corpus(tmp_path, quirks=True)
    (root / "README.md").write_bytes(b"# corpus \xc3\x28\n")
    write_manifest(root)
    problems = check_corpus(root)
    assert problems == [f"{root / 'README.md'}: not UTF-8 (byte 9 is b'\\xc3')"]


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1000, 100_000])
def test_a_case_nested_deep_is_one_line(root: Path, depth: int) -> None:
    case_json = root / "cases" / STREAM / "case.json"
    data = json.loads(case_json.read_text(encoding="utf-8"))
    data["request"]["deep"] = json.loads("[" * 50 + "]" * 50)  # fine
    case_json.write_text(json.dumps(data), encoding="utf-8")
    assert load_corpus(root)
    text = case_json.read_text(encoding="utf-8")
    case_json.write_text(text[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}", encoding="utf-8")
    assert _refused(root) == [f"{case_json}: nested deeper than {MAX_DEPTH} levels"]


def test_a_header_value_with_cr_or_lf_is_refused(root: Path) -> None:
    case_json = root / "cases" / STREAM / "case.json"
    data = json.loads(case_json.read_text(encoding="utf-8"))
    data["response"]["headers"]["x-injected"] = "a\r\nset-cookie: b=c"
    case_json.write_text(json.dumps(data), encoding="utf-8")
    problems = _refused(root)
    assert len(problems) == 1
    assert "header 'x-injected' has a control character" in problems[0]
    assert any("x-injected" in p for p in check_corpus(root))


@pytest.mark.parametrize(
    ("delays", "said"),
    [
        ('["1", 2]', "'delays_ms' must be a list of non-negative numbers"),
        ("[NaN, 1, 1, 1, 1, 1, 1, 1, 1]", "'delays_ms' must be a list of non-negative numbers"),
        ("[-5, 1, 1, 1, 1, 1, 1, 1, 1]", "'delays_ms' must be a list of non-negative numbers"),
        ('{"a": 1}', "'delays_ms' must be a list of non-negative numbers"),
        ("[1, 2]", "'delays_ms' has 2 entries, 'sizes' has 9"),
    ],
)
def test_chunk_delays_that_are_not_numbers_are_refused(root: Path, delays: str, said: str) -> None:
    chunks = root / "cases" / CHUNKED / "chunks.json"
    sizes = json.loads(chunks.read_text(encoding="utf-8"))["sizes"]
    chunks.write_text(f'{{"sizes": {json.dumps(sizes)}, "delays_ms": {delays}}}', encoding="utf-8")
    problems = _refused(root)
    assert len(problems) == 1 and said in problems[0]
    chunks.write_text(
        json.dumps({"sizes": sizes, "delays_ms": [0, 1.5, *[2] * (len(sizes) - 2)]}),
        encoding="utf-8",
    )
    assert load_corpus(root)


def test_the_manifest_covers_exactly_the_loaded_files(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    loaded = {
        f"cases/{case.id}/{name}"
        for case in load_corpus(root).cases
        for name in os.listdir(case.dir)
    }
    assert set(manifest["files"]) == loaded | {"VERSION", "FORMAT"}


# -- random bytes, in-process ------------------------------------------------

_PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_JSONISH = st.one_of(
    st.binary(max_size=300),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=20,
    ).map(lambda value: json.dumps(value).encode("utf-8")),
)


def _clean_or_one_line(call: Callable[[], Any]) -> None:
    try:
        _within(20, call)
    except CorpusError as exc:
        assert exc.problems and all(one_line(p) for p in exc.problems)


@_PROPERTY
@given(data=_JSONISH)
def test_random_case_json_is_a_case_or_one_line_problems(root: Path, data: bytes) -> None:
    case_json = root / "cases" / STREAM / "case.json"
    case_json.write_bytes(data)
    case, problems = _within(20, lambda: load_case(case_json, root))
    assert case is not None or problems
    assert all(one_line(p) for p in problems)
    _clean_or_one_line(lambda: load_corpus(root))


@_PROPERTY
@given(data=_JSONISH)
def test_random_chunks_json_is_clean_or_one_line(root: Path, data: bytes) -> None:
    (root / "cases" / CHUNKED / "chunks.json").write_bytes(data)
    _version, _cases, problems = _within(20, lambda: scan(root))
    assert all(one_line(p) for p in problems)
    _clean_or_one_line(lambda: load_corpus(root))


@_PROPERTY
@given(data=_JSONISH)
def test_random_manifest_json_is_clean_or_one_line(root: Path, data: bytes) -> None:
    (root / "manifest.json").write_bytes(data)
    problems = _within(20, lambda: check_corpus(root))
    assert problems and all(one_line(p) for p in problems)
    _clean_or_one_line(lambda: read_manifest(root))
