"""scripts/history and the history page, with a stand-in registry (no registry is touched)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from commands import small_corpus

from streamproof.corpus import load_corpus
from streamproof.corpus.validate import write_manifest
from streamproof.reporting.history import (
    history_page,
    load_checked,
    load_records,
    transitions,
    version_key,
    write_history_page,
)
from streamproof.reporting.render import template

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import history_lib as lib  # noqa: E402

ADAPTERS = Path(__file__).parent / "adapters"
OPENAI = lib.LIBRARIES["openai-python"]


class StandIn:
    """A registry whose releases install as test adapters, one per version."""

    def __init__(self, adapters: dict[str, str | None]) -> None:
        self.adapters = adapters  # version -> adapter file (None: the install fails)
        self.installed: list[str] = []

    def releases(self, library: lib.Library) -> list[str]:
        return sorted(self.adapters, key=version_key)

    def install(self, library: lib.Library, version: str, folder: Path) -> lib.Installed:
        self.installed.append(version)
        adapter = self.adapters[version]
        if adapter is None:
            raise lib.InstallError("pip install failed (exit 1): no such release")
        return lib.Installed(str(ADAPTERS / adapter), {"openai": version, "httpx": "0.28.1"})


def _history(tmp_path: Path, registry: StandIn, count: int = 4) -> lib.History:
    return lib.History(
        out=tmp_path / "history",
        cache=tmp_path / "cache",
        registries={"pypi": registry},
        corpus=tmp_path / "corpus",
        count=count,
        log=lambda line: None,
    )


@pytest.fixture
def scored(tmp_path: Path) -> tuple[Path, StandIn, list[lib.Scored]]:
    small_corpus(tmp_path / "corpus", {"sse-spec": 6})
    registry = StandIn(
        {
            "0.8.0": "naive_lines.py",  # outside the window of 4
            "0.9.0": "no_parse.py",  # the adapter cannot drive it
            "1.0.0": "naive_lines.py",
            "1.1.0": "async_reference.py",  # fixes what 1.0.0 got wrong
            "1.2.0": None,  # the registry failed
        }
    )
    return tmp_path, registry, _history(tmp_path, registry).run([OPENAI])


def test_the_last_releases_are_scored_into_one_record_each(
    scored: tuple[Path, StandIn, list[lib.Scored]],
) -> None:
    tmp_path, _, done = scored
    outcomes = {s.version: s.outcome for s in done}
    assert outcomes == {
        "0.9.0": "not scorable",
        "1.0.0": "scored",
        "1.1.0": "scored",
        "1.2.0": "install failed",
    }
    folder = tmp_path / "history" / "openai-python"
    assert sorted(p.name for p in folder.iterdir()) == ["0.9.0.json", "1.0.0.json", "1.1.0.json"]
    record = json.loads((folder / "1.0.0.json").read_text())
    corpus = load_corpus(tmp_path / "corpus")
    assert record["corpus"] == {"version": corpus.version, "sha256": corpus.sha256}
    assert record["resolved"] == {"httpx": "0.28.1", "openai": "1.0.0"}
    assert record["transports"] == ["whole"]
    assert set(record["cases"]) == {c.id for c in corpus.cases}
    assert "fail" in record["cases"].values()
    unscorable = json.loads((folder / "0.9.0.json").read_text())
    assert unscorable["status"] == "not scorable" and "parse" in unscorable["reason"]


def test_a_release_scored_on_this_corpus_is_kept_and_a_corpus_change_re_scores_it(
    scored: tuple[Path, StandIn, list[lib.Scored]],
) -> None:
    tmp_path, registry, _ = scored
    registry.installed.clear()
    again = _history(tmp_path, registry).run([OPENAI])
    assert {s.version: s.outcome for s in again}["1.0.0"] == "kept"
    assert registry.installed == ["1.2.0"]  # only the one that failed is tried again
    case = next((tmp_path / "corpus" / "cases" / "sse-spec").iterdir()) / "case.json"
    data = json.loads(case.read_text())
    data["comment"] = data.get("comment", "") + " (edited)"
    case.write_text(json.dumps(data, indent=2))
    write_manifest(tmp_path / "corpus")
    registry.installed.clear()
    third = _history(tmp_path, registry).run([OPENAI])
    assert {s.version: s.outcome for s in third}["1.0.0"] == "scored"
    assert "1.0.0" in registry.installed


def test_every_case_run_crashing_is_not_scorable(tmp_path: Path) -> None:
    small_corpus(tmp_path / "corpus", {"sse-spec": 6})
    done = _history(tmp_path, StandIn({"3.0.0": "raises.py"})).run([OPENAI])
    [only] = done
    assert only.outcome == "not scorable"
    assert only.detail.startswith("every case run crashed: ValueError")


def test_the_page_shows_rates_groups_and_where_cases_changed(
    scored: tuple[Path, StandIn, list[lib.Scored]],
) -> None:
    tmp_path, _, _ = scored
    corpus = load_corpus(tmp_path / "corpus")
    out = tmp_path / "history.html"
    page = write_history_page(
        tmp_path / "history", out, {"version": corpus.version, "sha256": corpus.sha256}, "x"
    )
    [library] = page["libraries"]
    assert [r["version"] for r in library["releases"]] == ["1.1.0", "1.0.0", "0.9.0"]
    newest = library["releases"][0]
    assert newest["rate"] == "100.0%"
    assert newest["cases_passed"] == newest["cases_judged"] == len(corpus.cases)
    assert {t["change"] for t in library["transitions"]} == {"started passing"}
    assert {t["release"] for t in library["transitions"]} == {"1.1.0"}
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html  # readable without JavaScript
    assert "started passing" in html and "not scorable" in html
    assert "openai-python" in html and "1.1.0" in html


def test_the_page_escapes_what_records_say(tmp_path: Path) -> None:
    record = {
        "format": 1,
        "library": "x",
        "package": "x",
        "version": "1.0.0",
        "resolved": {"<b>": "<i>"},
        "tool": "0",
        "corpus": {"version": "1", "sha256": "d"},
        "transports": ["whole"],
        "status": "not scorable",
        "reason": "<script>alert(1)</script>",
    }
    (tmp_path / "h" / "x").mkdir(parents=True)
    (tmp_path / "h" / "x" / "1.0.0.json").write_text(json.dumps(record))
    write_history_page(tmp_path / "h", tmp_path / "p.html", {"version": "1", "sha256": "d"}, "0")
    html = (tmp_path / "p.html").read_text()
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def _record(version: str, cases: dict[str, str], sha: str = "d") -> dict[str, Any]:
    return {
        "version": version,
        "status": "scored",
        "cases": cases,
        "corpus": {"sha256": sha},
        "summary": {"groups": {}},
    }


def test_transitions_follow_each_case_over_releases_and_ignore_skips() -> None:
    records = [
        _record("1.0.0", {"a": "fail", "b": "pass", "c": "skip"}),
        _record("1.1.0", {"a": "pass", "b": "skip", "c": "fail"}),
        _record("1.2.0", {"a": "pass", "b": "crash", "c": "fail"}),
    ]
    assert [
        (t["case"], t["change"], t["release"], t["previous"]) for t in transitions(records)
    ] == [
        ("a", "started passing", "1.1.0", "1.0.0"),
        ("b", "started failing", "1.2.0", "1.0.0"),
    ]


def test_records_of_another_corpus_are_counted_not_shown() -> None:
    records = {"x": [_record("1.0.0", {"a": "pass"}, "old"), _record("1.1.0", {"a": "pass"})]}
    page = history_page(records, "d")
    assert page["stale"] == 1
    assert [r["version"] for r in page["libraries"][0]["releases"]] == ["1.1.0"]


def test_versions_sort_as_numbers() -> None:
    assert sorted(["1.10.0", "1.9.2", "1.9.10", "2.0.0"], key=version_key) == [
        "1.9.2",
        "1.9.10",
        "1.10.0",
        "2.0.0",
    ]


def test_a_record_folder_with_a_foreign_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "1.json").write_text('{"format": 99}')
    with pytest.raises(ValueError, match="not a history record"):
        load_records(tmp_path)


# The registry clients, fed canned answers (nothing reaches a registry).


def test_pypi_lists_final_releases_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    said = "openai (1.2.0)\nAvailable versions: 1.2.0, 1.2.0rc1, 1.10.0, 1.1.0\n"
    monkeypatch.setattr(lib, "_run", lambda argv, **kw: said)
    assert lib.PyPI().releases(OPENAI) == ["1.1.0", "1.2.0", "1.10.0"]


def test_npm_pairs_ai_with_the_companion_of_its_day(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        ("ai", "versions"): ["7.0.1", "7.0.2-beta.1", "7.0.2"],
        ("ai", "time"): {"created": "2026", "7.0.1": "2026-03-01", "7.0.2": "2026-04-01"},
        ("@ai-sdk/openai-compatible", "time"): {
            "3.0.9": "2026-02-20",
            "3.0.10": "2026-03-15",
            "3.0.11-canary.0": "2026-03-20",
            "3.0.11": "2026-04-02",
        },
    }

    def view(argv: list[str], **kw: Any) -> str:
        assert argv[:2] == ["npm", "view"]
        return json.dumps(answers[(argv[2], argv[3])])

    monkeypatch.setattr(lib, "_run", view)
    npm, vercel = lib.Npm(runtime=Path("node")), lib.LIBRARIES["vercel-ai"]
    assert npm.releases(vercel) == ["7.0.1", "7.0.2"]
    assert npm._companion(vercel, "7.0.1") == "3.0.9"
    assert npm._companion(vercel, "7.0.2") == "3.0.10"


def test_a_version_that_is_no_file_name_is_not_installed(tmp_path: Path) -> None:
    small_corpus(tmp_path / "corpus", {"sse-spec": 6})
    registry = StandIn({"../../etc": "naive_lines.py"})
    done = _history(tmp_path, registry).run([OPENAI])
    assert [s.outcome for s in done] == ["install failed"] and registry.installed == []


def test_the_script_renders_the_page_alone(tmp_path: Path) -> None:
    import subprocess

    small_corpus(tmp_path / "corpus", {"sse-spec": 6})
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "history"), "--page-only",
         "--corpus", str(tmp_path / "corpus"), "--out", str(tmp_path / "h"),
         "--page", str(tmp_path / "p.html")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "No release has been scored" in (tmp_path / "p.html").read_text()
    assert re.search(r"page: .*p\.html \(0 libraries, 0 releases\)", done.stdout)


def test_a_change_says_whether_a_person_checked_it(tmp_path: Path) -> None:
    records = {
        "lib": [
            _record("1.0.0", {"c": "pass", "d": "fail"}),
            _record("1.1.0", {"c": "fail", "d": "pass"}),
        ]
    }
    found = "<b>a changelog entry</b>"
    checked = {"lib": {"1.1.0": {"found": found, "source": "CHANGELOG 1.1.0"}}}
    page = history_page(records, "d", checked)
    changes = page["libraries"][0]["transitions"]
    assert [c["checked"]["found"] for c in changes] == [found, found]
    html = template("history.html.j2").render(
        page=page, corpus={"version": "1", "sha256": "d"}, tool="0"
    )
    assert "&lt;b&gt;a changelog entry&lt;/b&gt;" in html and found not in html
    elsewhere = {"lib": {"1.0.0": {"found": "x", "source": "y"}}}  # another release
    page = history_page(records, "d", elsewhere)
    html = template("history.html.j2").render(
        page=page, corpus={"version": "1", "sha256": "d"}, tool="0"
    )
    assert html.count("not yet: read from the records only") == 2


def test_a_malformed_check_file_is_one_error_naming_it(tmp_path: Path) -> None:
    assert load_checked(tmp_path) == {}  # none yet
    (tmp_path / "checked.json").write_text('{"lib": {"1.0": {"found": 3}}}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"checked\.json"):
        load_checked(tmp_path)


def test_the_shipped_checks_name_changes_the_history_shows() -> None:
    folder = ROOT / "reports" / "history"
    checked = load_checked(folder)
    records = load_records(folder)
    for name, releases in checked.items():
        shown = {t["release"] for t in transitions(records[name])}
        assert set(releases) <= shown, f"{name}: a check of a release where nothing changed"
