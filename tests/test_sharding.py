"""``run --shard K/N`` and ``merge``: shards of one plan, joined into the whole run."""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from commands import dump, load, small_corpus, streamproof
from hostile.corpus_builder import one_line

from streamproof.harness.sharding import MAX_SHARDS, Shard, plan_digest

ADAPTERS = Path(__file__).parent / "adapters"
# An adapter that gets some of these cases wrong under some transports, so the
# merged verdicts are not all one kind.
ADAPTER = str(ADAPTERS / "naive_lines.py")
TRANSPORTS = "whole,lines,bytes"


class _Case:
    def __init__(self, id: str) -> None:
        self.id = id


def _plan(cases: int, transports: tuple[str, ...]) -> list[tuple[Any, str]]:
    return [(_Case(f"p/c{i:03}"), t) for i in range(cases) for t in transports]


# -- the deal ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("2", "is not K/N"),
        ("0/4", "K must be from 1 to N"),
        ("5/4", "K must be from 1 to N"),
        ("1/0", "N must be from 1"),
        (f"1/{MAX_SHARDS + 1}", "N must be from 1"),
        ("a/b", "is not K/N"),
    ],
)
def test_a_bad_shard_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Shard.parse(text)


def test_a_shard_reads_back_as_written() -> None:
    assert Shard.parse(" 3 / 8 ") == Shard(3, 8)
    assert str(Shard(3, 8)) == "3/8"


@pytest.mark.parametrize("count", range(1, 9))
@pytest.mark.parametrize("cases", [1, 7, 33])
def test_every_run_is_in_exactly_one_shard_and_the_shards_are_even(count: int, cases: int) -> None:
    plan = _plan(cases, ("whole", "lines", "bytes"))
    shares = [Shard(k, count).take(plan) for k in range(1, count + 1)]
    dealt = [(case.id, t) for share in shares for case, t in share]
    assert sorted(dealt) == sorted((case.id, t) for case, t in plan)
    assert len(dealt) == len(set(dealt))
    sizes = [len(share) for share in shares]
    assert max(sizes) - min(sizes) <= 3  # at most one case's runs
    if cases >= count:  # a case's runs stay together, so its files are read by one shard
        owners = [{c.id for c, _ in share} for share in shares]
        assert sum(len(found) for found in owners) == cases
    else:  # too few cases: dealt run by run, none left empty
        assert min(sizes) >= 1 or len(plan) < count
    for share in shares:  # each in plan order
        positions = [plan.index(run) for run in share]
        assert positions == sorted(positions)


def test_cases_of_unequal_runs_are_dealt_to_the_lightest_shard() -> None:
    plan = [(_Case("p/a"), t) for t in ("whole", "lines", "bytes", "random")]
    plan += [(_Case(f"p/{n}"), "whole") for n in "bcde"]
    shares = [[c.id for c, _ in Shard(k, 2).take(plan)] for k in (1, 2)]
    # a's four runs go to shard 1; b, c, d and e fill shard 2 up to them
    assert shares == [["p/a"] * 4, ["p/b", "p/c", "p/d", "p/e"]]


def test_the_deal_depends_on_the_plan_alone() -> None:
    first = [(c.id, t) for c, t in Shard(2, 5).take(_plan(20, ("whole", "bytes")))]
    again = [(c.id, t) for c, t in Shard(2, 5).take(_plan(20, ("whole", "bytes")))]
    assert first == again
    # the cases in turn, each to the lightest shard: shard 2 gets the 2nd, 7th, 12th, 17th
    assert first == [(f"p/c{i:03}", t) for i in (1, 6, 11, 16) for t in ("whole", "bytes")]


def test_the_plan_digest_is_a_line_per_run() -> None:
    plan = _plan(2, ("whole", "bytes"))
    text = "p/c000\twhole\np/c000\tbytes\np/c001\twhole\np/c001\tbytes\n"
    assert plan_digest(plan) == hashlib.sha256(text.encode()).hexdigest()


# -- runs and merges -----------------------------------------------------


def _run(folder: Path, corpus: Path, out: str, *extra: str) -> Any:
    done = streamproof(
        "run",
        "--adapter",
        ADAPTER,
        "--corpus",
        corpus,
        "--transport",
        TRANSPORTS,
        "--no-html",
        "-q",
        "--json",
        folder / out,
        *extra,
    )
    assert done.returncode in (0, 1), done.stderr
    return load(folder / out)


def _merge(folder: Path, corpus: Path, *files: Path) -> Any:
    return streamproof("merge", *files, "--json", folder / "merged.json", "--corpus", corpus)


def _but_timings(document: Any) -> Any:
    document = copy.deepcopy(document)
    document["run"].pop("date")
    document["run"].pop("merged", None)
    for row in document["results"]:
        row.pop("seconds")
    return document


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Any]:
    folder = tmp_path_factory.mktemp("shards")
    corpus = small_corpus(folder / "corpus", {"openai": 8, "sse-spec": 6})
    whole = _run(folder, corpus, "whole.json")
    return folder, corpus, whole


def test_the_small_run_is_varied_enough_to_show_a_merge(runs: tuple[Path, Path, Any]) -> None:
    _, _, whole = runs
    verdicts = Counter(row["verdict"] for row in whole["results"])
    assert verdicts["pass"] and verdicts["fail"], verdicts
    assert "shard" not in whole["run"]
    assert whole["run"]["options"] == {
        "cases": [],
        "providers": [],
        "keyword": "",
        "timeout": None,
        "expect_sha256": None,
    }


@pytest.mark.parametrize("count", range(1, 9))
def test_any_sharding_merges_into_the_whole_run(runs: tuple[Path, Path, Any], count: int) -> None:
    folder, corpus, whole = runs
    files = []
    for index in range(1, count + 1):
        shard = _run(folder, corpus, f"s{index}of{count}.json", "--shard", f"{index}/{count}")
        assert shard["run"]["shard"]["index"] == index
        assert shard["run"]["shard"]["count"] == count
        files.append(folder / f"s{index}of{count}.json")
    done = _merge(folder, corpus, *reversed(files))  # (in any order)
    assert done.returncode == 0, done.stderr
    merged = load(folder / "merged.json")
    assert _but_timings(merged) == _but_timings(whole)
    assert merged["run"]["merged"]["count"] == count


def _shards(runs: tuple[Path, Path, Any], count: int = 3) -> list[Path]:
    folder, corpus, _ = runs
    files = [folder / f"s{k}of{count}.json" for k in range(1, count + 1)]
    for index, path in enumerate(files, 1):
        if not path.exists():
            _run(folder, corpus, path.name, "--shard", f"{index}/{count}")
    return files


def test_a_merged_run_is_verified_badged_diffed_and_reported_as_one_run(
    runs: tuple[Path, Path, Any],
) -> None:
    folder, corpus, whole = runs
    assert _merge(folder, corpus, *_shards(runs)).returncode == 0
    merged = folder / "merged.json"
    badge = folder / "badge.json"
    done = streamproof("verify", merged, "--corpus", corpus, "--badge", badge)
    assert done.returncode == 0, done.stderr
    streamproof("verify", folder / "whole.json", "--corpus", corpus, "--badge", folder / "b0.json")
    assert load(badge) == load(folder / "b0.json")
    done = streamproof("diff", folder / "whole.json", merged)
    assert done.returncode == 0, done.stdout + done.stderr
    matrix = folder / "matrix.html"
    done = streamproof("report", merged, "--corpus", corpus, "--output", matrix)
    assert done.returncode == 0, done.stderr
    assert f"{whole['summary']['passed']}" in matrix.read_text(encoding="utf-8")


def test_verify_calls_a_lone_shard_a_part_of_a_run(runs: tuple[Path, Path, Any]) -> None:
    corpus = runs[1]
    done = streamproof("verify", _shards(runs)[0], "--corpus", corpus)
    assert done.returncode == 1
    assert "shard 1/3 of a run: merge its shards" in done.stderr


def _refused(runs: tuple[Path, Path, Any], files: list[Path], words: str) -> None:
    folder, corpus, _ = runs
    (folder / "merged.json").unlink(missing_ok=True)
    done = _merge(folder, corpus, *files)
    assert done.returncode == 2, done.stdout
    assert one_line(done.stderr), done.stderr
    assert words in done.stderr, done.stderr
    assert not (folder / "merged.json").exists()


def _edited(runs: tuple[Path, Path, Any], path: Path, name: str, edit: Any) -> Path:
    document = load(path)
    edit(document)
    return dump(document, runs[0] / name)


def test_merge_refuses_a_gap(runs: tuple[Path, Path, Any]) -> None:
    one, two, _ = _shards(runs)
    _refused(runs, [one, two], "gap: shard 3/3 missing")


def test_merge_refuses_a_shard_given_twice(runs: tuple[Path, Path, Any]) -> None:
    one, two, three = _shards(runs)
    _refused(runs, [one, two, two, three], "overlap:")


def test_merge_refuses_a_run_in_two_shards(runs: tuple[Path, Path, Any]) -> None:
    one, two, three = _shards(runs)

    def steal(document: Any) -> None:
        document["results"].append(load(one)["results"][0])

    _refused(runs, [one, two, _edited(runs, three, "x.json", steal)], "overlap: ")


def test_merge_refuses_a_shard_missing_a_run(runs: tuple[Path, Path, Any]) -> None:
    one, two, three = _shards(runs)
    cut = _edited(runs, three, "x.json", lambda d: d["results"].pop())
    _refused(runs, [one, two, cut], "not the share of shard 3/3 of the plan: 1 of its runs missing")


def test_merge_refuses_mixed_corpora(runs: tuple[Path, Path, Any]) -> None:
    one, two, three = _shards(runs)
    other = _edited(runs, three, "x.json", lambda d: d["corpus"].update(sha256="0" * 64))
    _refused(runs, [one, two, other], "mixed corpora:")


def test_merge_refuses_mixed_adapters(runs: tuple[Path, Path, Any]) -> None:
    one, two, three = _shards(runs)
    other = _edited(runs, two, "x.json", lambda d: d["adapter"].update(version="9.9"))
    _refused(runs, [one, other, three], "mixed adapters:")


def test_merge_refuses_mixed_tool_versions(runs: tuple[Path, Path, Any]) -> None:
    one, two, three = _shards(runs)
    other = _edited(runs, two, "x.json", lambda d: d["tool"].update(version="0.0.1"))
    _refused(runs, [one, other, three], "mixed tool versions:")


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d["run"].update(seed=7), "mixed seeds:"),
        (lambda d: d["run"].update(transports=["whole"]), "mixed transports:"),
        (lambda d: d["run"]["options"].update(keyword="tool"), "mixed options:"),
        (lambda d: d["run"]["options"].update(timeout=3.0), "mixed options:"),
        (lambda d: d["run"]["options"].update(expect_sha256="a" * 64), "mixed options:"),
        (lambda d: d["run"]["shard"].update(count=4), "mixed shard counts:"),
        (lambda d: d["run"]["shard"].update(plan_sha256="b" * 64), "mixed plans:"),
    ],
)
def test_merge_refuses_mixed_options(runs: tuple[Path, Path, Any], edit: Any, words: str) -> None:
    one, two, three = _shards(runs)
    _refused(runs, [one, two, _edited(runs, three, "x.json", edit)], words)


def test_merge_refuses_a_whole_run(runs: tuple[Path, Path, Any]) -> None:
    _refused(runs, [runs[0] / "whole.json"], "not a shard")


def test_merge_refuses_shards_of_another_corpus(runs: tuple[Path, Path, Any]) -> None:
    folder, _, _ = runs
    done = streamproof("merge", *_shards(runs), "--json", folder / "merged.json")
    assert done.returncode == 2
    assert one_line(done.stderr) and "give its folder with --corpus" in done.stderr


def test_a_shard_beyond_the_plan_is_refused(runs: tuple[Path, Path, Any]) -> None:
    corpus = runs[1]
    done = streamproof(
        "run", "--corpus", corpus, "--case", "openai/*", "--transport", "whole",
        "--no-html", "--shard", "64/64",
    )  # fmt: skip
    assert done.returncode == 2
    assert one_line(done.stderr) and "use fewer shards" in done.stderr


def test_the_plugin_collects_the_same_shards(pytester: pytest.Pytester) -> None:
    def collected(*extra: str) -> list[str]:
        result = pytester.runpytest(
            "--streamproof=reference", "--streamproof-case=openai/*",
            "--streamproof-transport=whole,lines", "--co", "-q", *extra,
        )  # fmt: skip
        return [x for x in result.outlines if x.startswith("streamproof::")]

    whole = collected()
    shares = [collected(f"--streamproof-shard={k}/3") for k in (1, 2, 3)]
    assert sorted(x for share in shares for x in share) == sorted(whole)
    assert all(shares)
    result = pytester.runpytest("--streamproof=reference", "--streamproof-shard=4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--streamproof-shard: '4/3': K must be from 1 to N (3)*"])
