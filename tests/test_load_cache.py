"""A corpus load kept between processes while no file changed (corpus/load_cache.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from streamproof.corpus import CorpusError, load_cache, load_corpus
from streamproof.corpus import cases as cases_module
from streamproof.corpus.cases import file_digests, tree_digest
from streamproof.resources import data_path

CASE = "generic/finish-without-done"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("STREAMPROOF_CACHE_DIR", str(folder))
    # The files of a corpus copied just now are kept at once (see test_recent_files_are_not_kept).
    monkeypatch.setattr(load_cache, "RECENT_NS", -(10**18))
    return folder


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    shutil.copytree(data_path("corpus"), root)
    return root


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The corpus files each load reads from now on."""
    read: list[str] = []
    real = cases_module.read_text

    def counted(path: Path, *args: Any) -> str:
        read.append(str(path))
        return real(path, *args)

    monkeypatch.setattr(cases_module, "read_text", counted)
    return read


def _facts(root: Path) -> list[tuple[Any, ...]]:
    corpus = load_corpus(root)
    return [
        (c.id, c.dir, c.provider, c.severity, c.requires, c.runnable, c.expected_sha256,
         c.has_chunks, c.files and (c.files.case_json_sha256, c.files.body, c.files.body_sha256))
        for c in corpus.cases
    ] + [(corpus.version, corpus.sha256)]  # fmt: skip


def test_an_unchanged_corpus_loads_from_the_cache_reading_no_file(
    cache: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = load_corpus(corpus)
    read = _reads(monkeypatch)
    again = load_corpus(corpus)
    assert read == []
    assert again.sha256 == first.sha256 == tree_digest(file_digests(corpus))
    assert [c.id for c in again.cases] == [c.id for c in first.cases]
    for old, new in zip(first.cases, again.cases, strict=True):
        assert (new.dir, new.provider, new.severity, new.requires, new.runnable) == (
            old.dir, old.provider, old.severity, old.requires, old.runnable
        )  # fmt: skip
        assert (new.expected_sha256, new.has_chunks) == (old.expected_sha256, old.has_chunks)
    # A case of the cached load reads its files back, checked against the kept sha256.
    case = next(c for c in again.cases if c.id == CASE)
    assert (
        case.data["id"] == CASE
        and case.body == (corpus / "cases" / CASE / "response.sse").read_bytes()
    )


@pytest.mark.parametrize(
    "change",
    [
        "same size, other bytes",
        "touched",
        "a file added",
        "a file removed",
        "replaced by a copy",
    ],
)
def test_any_change_to_the_listing_reads_everything_again(
    cache: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    load_corpus(corpus)
    body = corpus / "cases" / CASE / "response.sse"
    if change == "same size, other bytes":
        data = body.read_bytes()
        body.write_bytes(data.replace(b"data:", b"DATA:", 1))
    elif change == "touched":
        os.utime(body)
    elif change == "a file added":
        (corpus / "NOTES.txt").write_text("a note\n")
    elif change == "a file removed":
        (corpus / "SOURCES.md").unlink()
    else:
        copy = body.with_name("copy")
        shutil.copy2(body, copy)
        copy.replace(body)
    read = _reads(monkeypatch)
    again = load_corpus(corpus)
    assert str(corpus / "cases" / CASE / "case.json") in read
    assert again.sha256 == tree_digest(file_digests(corpus))


def test_a_change_that_breaks_a_case_is_found_after_a_cached_load(
    cache: Path, corpus: Path
) -> None:
    load_corpus(corpus)
    (corpus / "cases" / CASE / "case.json").write_text("{}")
    with pytest.raises(CorpusError):
        load_corpus(corpus)


def test_a_link_is_refused_after_a_cached_load(cache: Path, corpus: Path) -> None:
    load_corpus(corpus)
    (corpus / "cases" / CASE / "extra").symlink_to("/etc/hostname")
    with pytest.raises(CorpusError, match="a symbolic link"):
        load_corpus(corpus)


def test_recent_files_are_not_kept(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv("STREAMPROOF_CACHE_DIR", str(folder))
    load_corpus(corpus)  # copied less than RECENT_NS ago: its change times are too new
    assert not list(folder.glob("corpus-load-*"))


def test_a_smaller_file_bound_is_not_answered_from_the_cache(
    cache: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_corpus(corpus)
    monkeypatch.setenv("STREAMPROOF_MAX_FILE_BYTES", "100")
    with pytest.raises(CorpusError) as refused:
        load_corpus(corpus)
    assert all("over the bound" in problem for problem in refused.value.problems)


@pytest.mark.parametrize("content", [b"", b"not json", b"[]", b'{"format": 1, "signature": 3}'])
def test_a_broken_cache_file_is_no_cache(
    cache: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    expected = _facts(corpus)
    (kept,) = cache.glob("corpus-load-*.json")
    kept.write_bytes(content)
    assert _facts(corpus) == expected


def test_a_cache_kept_with_other_cases_is_checked_by_its_signature(
    cache: Path, corpus: Path, tmp_path: Path
) -> None:
    # Two corpora have two cache files: the key names the folder.
    other = tmp_path / "other"
    shutil.copytree(corpus, other)
    shutil.rmtree(other / "cases" / "generic")
    load_corpus(corpus)
    load_corpus(other)
    assert len(list(cache.glob("corpus-load-*.json"))) == 2
    assert {c.provider for c in load_corpus(other).cases} >= {"openai"}
    assert "generic" not in {c.provider for c in load_corpus(other).cases}
    assert "generic" in {c.provider for c in load_corpus(corpus).cases}


def test_off_keeps_nothing(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMPROOF_CACHE_DIR", "off")
    monkeypatch.setattr(load_cache, "RECENT_NS", -(10**18))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    read = _reads(monkeypatch)
    load_corpus(corpus)
    first = len(read)
    load_corpus(corpus)
    assert len(read) == 2 * first > 0
    assert not (tmp_path / "home").exists()


def test_validate_reads_every_byte(
    cache: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamproof.cli import main

    load_corpus(corpus)
    read = _reads(monkeypatch)
    assert main(["validate", "--corpus", str(corpus)]) == 0
    assert str(corpus / "cases" / CASE / "case.json") in read
    assert "ok: " in capsys.readouterr().out
