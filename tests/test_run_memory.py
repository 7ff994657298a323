"""A long run keeps no outcome per case run once its report is made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamproof.harness.engine import Verdict


class _Keep:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = list(session.items)


def test_items_drop_their_outcome_after_the_report(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    keep = _Keep()
    code = pytest.main(
        [
            "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), "-q",
            "-p", "no:cacheprovider",
            "--streamproof=reference", "--streamproof-case=generic/finish-without-done",
            "--streamproof-transport=whole,bytes", str(tmp_path),
        ],
        plugins=[keep],
    )  # fmt: skip
    assert code == 0
    assert [item.name for item in keep.items] == [
        "generic/finish-without-done[whole]",
        "generic/finish-without-done[bytes]",
    ]
    for item in keep.items:
        assert item.result.verdict is Verdict.PASS
        assert item.result.outcome is None


@pytest.mark.parametrize(("jobs", "junit"), [(1, False), (1, True), (2, False)])
def test_a_sealed_run_loads_only_the_pytest_plugins_it_uses(
    tmp_path: Path, jobs: int, junit: bool
) -> None:
    # pytest's terminal reporter keeps every report of the session to its end;
    # JUnit's plugin loads for --junit alone, and --jobs needs no xdist.
    from streamproof.cli.pytest_session import _arguments
    from streamproof.cli.run_options import RunOptions

    target = tmp_path / "junit.xml"
    options = RunOptions(
        "reference", ["whole"], 1, "may", jobs=jobs, junit=target if junit else None
    )
    args = _arguments(options, tmp_path, {target: tmp_path / "staged.xml"})
    assert "-pno:terminal" in args and "xdist.plugin" not in args
    assert ("-pno:junitxml" not in args) is junit
    assert "-pno:logging" in args and "-pno:warnings" in args
    assert ("--streamproof-jobs" in args) is (jobs > 1)
