from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from streamproof.corpus import CorpusError, load_corpus
from streamproof.corpus.validate import check_corpus, needed_capabilities, write_manifest
from streamproof.resources import data_path

ROOT = data_path("corpus")


def test_the_shipped_corpus_validates_against_schemas_and_manifest() -> None:
    assert check_corpus(ROOT) == []


def test_the_shipped_corpus_is_big_enough_and_ids_are_unique() -> None:
    cases = load_corpus().cases
    assert len(cases) >= 40
    assert len({c.id for c in cases}) == len(cases)


def test_every_case_requires_what_its_expectation_needs() -> None:
    for case in load_corpus().cases:
        assert needed_capabilities(case) <= case.requires, case.id


def test_corpus_attributes_keep_git_from_rewriting_bytes() -> None:
    assert (ROOT / ".gitattributes").read_text().split() == ["*", "-text"]


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    target = tmp_path / "corpus"
    shutil.copytree(ROOT, target)
    return target


def edit(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def test_broken_json_is_one_line_naming_the_file(copy: Path) -> None:
    bad = copy / "cases/generic/finish-without-done/case.json"
    bad.write_text('{"id": ')
    with pytest.raises(CorpusError) as info:
        load_corpus(copy)
    (problem,) = info.value.problems
    assert str(bad) in problem
    assert "not valid JSON" in problem
    assert "\n" not in problem


def test_unknown_key_is_an_error(copy: Path) -> None:
    edit(copy / "cases/generic/finish-without-done/case.json", requries=["content"])
    problems = check_corpus(copy)
    assert any("requries" in p and "finish-without-done" in p for p in problems)


def test_id_must_match_the_folder(copy: Path) -> None:
    edit(copy / "cases/generic/finish-without-done/case.json", id="generic/other")
    assert any("does not match its folder" in p for p in check_corpus(copy))


def test_title_style(copy: Path) -> None:
    edit(copy / "cases/generic/finish-without-done/case.json", title="Ends with a period.")
    assert any("should start lower-case" in p for p in check_corpus(copy))


def test_missing_capability_in_requires(copy: Path) -> None:
    edit(copy / "cases/generic/usage-in-finish-chunk/case.json", requires=["content"])
    assert any("needs capabilities" in p and "usage" in p for p in check_corpus(copy))


def test_unknown_semantics_section(copy: Path) -> None:
    edit(copy / "cases/generic/finish-without-done/case.json", spec=["semantics §99.9"])
    assert any("names no section" in p for p in check_corpus(copy))


def test_secret_in_a_body_is_caught(copy: Path) -> None:
    body = copy / "cases/generic/finish-without-done/response.sse"
    body.write_bytes(body.read_bytes() + b": sk-" + b"a" * 40 + b"\n\n")
    assert any("secret" in p for p in check_corpus(copy))


def test_edited_body_breaks_the_manifest_until_rewritten(copy: Path) -> None:
    body = copy / "cases/generic/finish-without-done/response.sse"
    body.write_bytes(body.read_bytes() + b": edited\n\n")
    assert any("sha256 differs from the manifest" in p for p in check_corpus(copy))
    write_manifest(copy)
    assert check_corpus(copy) == []


def test_new_file_must_enter_the_manifest(copy: Path) -> None:
    shutil.copytree(copy / "cases/generic/finish-without-done", copy / "cases/generic/x-copy")
    edit(copy / "cases/generic/x-copy/case.json", id="generic/x-copy")
    assert any("not in the manifest" in p for p in check_corpus(copy))


def test_retired_ids_cannot_come_back(copy: Path) -> None:
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["retired"] = {"generic/finish-without-done": "0.0.9"}
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert any("was retired in 0.0.9" in p for p in check_corpus(copy))


def test_stray_second_body_file(copy: Path) -> None:
    (copy / "cases/generic/finish-without-done/response.json").write_text("{}")
    assert any("stray body file" in p for p in check_corpus(copy))


@pytest.mark.parametrize("inside", [[], ["response.sse"], ["notes/"]])
def test_a_case_folder_without_case_json_is_named(copy: Path, inside: list[str]) -> None:
    folder = copy / "cases/generic/zz-no-case-json"
    folder.mkdir()
    for name in inside:
        (folder / name.rstrip("/")).mkdir() if name.endswith("/") else (folder / name).touch()
    with pytest.raises(CorpusError) as info:
        load_corpus(copy)
    assert info.value.problems == [f"{folder}: case folder without case.json"]


def test_a_load_reads_each_file_it_digests_once_and_lists_the_tree_once(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamproof.corpus import cases, gate

    listed, read = [], []
    real_tree, real_read = gate.tree, gate.read_file
    monkeypatch.setattr(cases, "tree", lambda root: listed.append(root) or real_tree(root))
    monkeypatch.setattr(
        cases, "walk", lambda root: listed.append(root) or [n for n, _ in real_tree(root)[0]]
    )
    monkeypatch.setattr(
        cases, "read_file", lambda path, *a: read.append(str(path)) or real_read(path, *a)
    )
    corpus = load_corpus(copy)
    assert len(listed) == 1
    assert len(read) == len(set(read))
    assert corpus.sha256 == cases.tree_digest(cases.file_digests(copy))


def test_unreviewed_recorded_case_is_listed_but_not_runnable(copy: Path) -> None:
    edit(
        copy / "cases/generic/finish-without-done/case.json",
        provenance={
            "kind": "recorded",
            "source": "capture",
            "observed": "2026-11",
            "recorded_at": "2026-11-30T10:00:00Z",
            "endpoint": "api.example.com",
        },
    )
    case = next(c for c in load_corpus(copy).cases if c.id == "generic/finish-without-done")
    assert not case.runnable


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"sizes": [1, 2]}', "add up to 3 bytes"),
        ('{"sizes": [0]}', "positive integers"),
        ("[1]", "not a JSON object"),
    ],
)
def test_chunks_json_is_checked_at_load(copy: Path, content: str, message: str) -> None:
    (copy / "cases/generic/finish-without-done/chunks.json").write_text(content)
    with pytest.raises(CorpusError) as info:
        load_corpus(copy)
    assert message in info.value.problems[0]
    assert "chunks.json" in info.value.problems[0]


def test_corpus_breadth_and_honest_provenance() -> None:
    cases = load_corpus().cases
    providers = {c.provider for c in cases} - {"generic", "sse-spec"}
    assert len(providers) >= 25
    assert len(cases) >= 300
    kinds = [c.data["provenance"]["kind"] for c in cases]
    assert "recorded" not in kinds  # nothing in the corpus was captured by us yet
    assert kinds.count("documented") / len(kinds) >= 0.6
    for case in cases:
        provenance = case.data["provenance"]
        if provenance["kind"] == "documented":
            assert provenance["source"].startswith(("http://", "https://")), case.id
    assert sum(c.provider == "sse-spec" for c in cases) >= 30


def test_readme_quirk_tables_match_the_data() -> None:
    from streamproof.corpus.quirks import load_quirks, readme_with_tables

    catalogue, problems = load_quirks(ROOT)
    assert catalogue is not None and problems == []
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme_with_tables(readme, catalogue, load_corpus().cases) == readme


def test_every_tag_is_a_catalogued_quirk() -> None:
    from streamproof.corpus.quirks import load_quirks

    catalogue, _ = load_quirks(ROOT)
    assert catalogue is not None
    tags = {tag for case in load_corpus().cases for tag in case.data["tags"]}
    assert tags <= set(catalogue.quirks)


def test_an_unknown_tag_and_stale_tables_are_caught(copy: Path) -> None:
    edit(copy / "cases/generic/finish-without-done/case.json", tags=["no-such-quirk"])
    assert any("'no-such-quirk' is not a quirk" in p for p in check_corpus(copy))
    edit(copy / "cases/generic/finish-without-done/case.json", tags=[])
    write_manifest(copy)
    assert any("quirk tables are out of date" in p for p in check_corpus(copy))


def test_the_corpus_digest_covers_the_bytes_the_load_read(copy: Path) -> None:
    from streamproof.corpus.cases import file_digests, tree_digest

    before = tree_digest(file_digests(copy))
    corpus = load_corpus(copy)
    # A body edited after the load: the loaded corpus keeps the digest of
    # what it runs, a fresh reading of the folder sees the edit.
    body = copy / "cases/generic/finish-without-done/response.sse"
    body.write_bytes(body.read_bytes() + b": edited\n\n")
    assert corpus.sha256 == before != tree_digest(file_digests(copy))
    assert load_corpus(copy).sha256 == tree_digest(file_digests(copy))


def test_a_loaded_case_reads_its_files_again_and_refuses_a_change(copy: Path) -> None:
    case_id = "generic/finish-without-done"
    body = copy / f"cases/{case_id}/response.sse"
    original = body.read_bytes()
    loaded = {c.id: c for c in load_corpus(copy).cases}[case_id]
    body.write_bytes(original + b": edited\n\n")
    with pytest.raises(CorpusError, match="changed since the corpus was loaded"):
        loaded.body  # noqa: B018 (read back from the folder, edited since)
    body.write_bytes(original)
    assert loaded.body == original and loaded.data["id"] == case_id
    # A corpus loaded after an edit reads the edited bytes, never those kept
    # for an earlier load of the same folder.
    body.write_bytes(original + b": edited\n\n")
    again = {c.id: c for c in load_corpus(copy).cases}[case_id]
    assert again.body == original + b": edited\n\n" and loaded.body == original


def test_walk_names_files_from_the_root_in_the_order_of_their_path_parts(tmp_path: Path) -> None:
    from streamproof.corpus.gate import walk

    for name in ("a/x", "a-b/x", "a.b", "a/b/c", "A/z", "b"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    found = walk(tmp_path)
    assert found == ["A/z", "a/b/c", "a/x", "a-b/x", "a.b", "b"]
